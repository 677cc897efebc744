import { EntityGitError } from './errors.js';
import type { Identity } from './objects/commit.js';
import { isOid } from './objects/frame.js';
import { dirname, joinPath } from './storage/paths.js';
import type { Store } from './storage/store.js';
import { acquireLockFile, LOCK_DEFAULTS, lockOptions, type LockOptions } from './lock-file.js';

export const ZERO_OID = '0'.repeat(40);

/**
 * How a {@link RefStore} takes `<ref>.lock`: {@link LockOptions}, each field defaulting to
 * `LOCK_DEFAULTS.ref` (5 s of waiting, taken over after 30 s).
 */
export type RefOptions = Partial<LockOptions>;

/** The refs of `packed-refs` in `gitdir`, by full name (peeled lines left out). */
async function packedRefs(store: Store, gitdir: string): Promise<Map<string, string>> {
  const map = new Map<string, string>();
  const text = await store.readText(joinPath(gitdir, 'packed-refs'));
  if (text === null) return map;
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#') || line.startsWith('^')) continue;
    const [oid, ref] = line.split(' ');
    if (isOid(oid) && ref) map.set(ref, oid);
  }
  return map;
}

/**
 * Every ref of the repository at `gitdir` whose full name starts with `prefix` (`refs/remotes/`),
 * loose and packed (a loose one wins, as in git), with the object it holds; symbolic refs
 * (`refs/remotes/origin/HEAD`) are left out. Sorted by name. A function of its own, not a method
 * of {@link RefStore}, so a bundle that never lists refs leaves it out.
 */
export async function refsUnder(store: Store, gitdir: string, prefix: string): Promise<Map<string, string>> {
  const found = await packedRefs(store, gitdir);
  for (const ref of [...found.keys()]) if (!ref.startsWith(prefix)) found.delete(ref);
  const walk = async (dir: string, name: string): Promise<void> => {
    for (const entry of await store.readdir(dir)) {
      const full = joinPath(dir, entry);
      const st = await store.lstat(full);
      if (st?.isDirectory()) await walk(full, `${name}${entry}/`);
      else if (st?.isFile() && !entry.endsWith('.lock') && !entry.includes('.tmp-')) {
        // A loose ref hides its packed value; one that is symbolic (or unreadable) is left out.
        const value = (await store.readText(full))?.trim() ?? '';
        if (isOid(value)) found.set(name + entry, value);
        else found.delete(name + entry);
      }
    }
  };
  const dir = prefix.endsWith('/') ? prefix.slice(0, -1) : dirname(prefix);
  await walk(joinPath(gitdir, dir), `${dir}/`);
  return new Map([...found].filter(([ref]) => ref.startsWith(prefix)).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/**
 * Refs of one repository, moved the way git moves them: `<ref>.lock` taken create-exclusive,
 * the old value checked, the lock renamed over the ref, the reflog appended. A lock held by
 * anyone else is waited for, never written through.
 */
export class RefStore {
  private readonly lock: LockOptions;

  constructor(
    private readonly store: Store,
    readonly gitdir: string,
    options: RefOptions = {},
  ) {
    this.lock = lockOptions(LOCK_DEFAULTS.ref, options);
  }

  private path(name: string): string {
    return joinPath(this.gitdir, name);
  }

  /** The ref's raw value: `{ oid }`, `{ symbolic }`, or null when absent. `REF_CORRUPT` if unreadable. */
  async readRaw(name: string): Promise<{ oid: string } | { symbolic: string } | null> {
    const text = await this.store.readText(this.path(name));
    if (text === null) {
      const packed = (await this.packed()).get(name);
      return packed ? { oid: packed } : null;
    }
    const value = text.trim();
    if (value.startsWith('ref: ')) return { symbolic: value.slice(5) };
    if (!isOid(value)) {
      throw new EntityGitError(
        'REF_CORRUPT',
        `ref ${name} holds ${JSON.stringify(text.slice(0, 60))}, not an object id`,
        { ref: name },
      );
    }
    return { oid: value };
  }

  /** The commit a ref (or HEAD) points at, following symbolic refs; null when unborn or absent. */
  async resolve(name: string): Promise<string | null> {
    for (let depth = 0; depth < 5; depth++) {
      const raw = await this.readRaw(name);
      if (raw === null) return null;
      if ('oid' in raw) return raw.oid;
      name = raw.symbolic;
    }
    throw new EntityGitError('REF_CORRUPT', `symbolic ref loop at ${name}`, { ref: name });
  }

  /** The branch HEAD names (`main` for `ref: refs/heads/main`), or null when detached/absent. */
  async headBranch(): Promise<string | null> {
    const raw = await this.readRaw('HEAD');
    if (raw === null || !('symbolic' in raw) || !raw.symbolic.startsWith('refs/heads/')) return null;
    return raw.symbolic.slice('refs/heads/'.length);
  }

  private packed(): Promise<Map<string, string>> {
    return packedRefs(this.store, this.gitdir);
  }

  /** Branch names under refs/heads, loose and packed, sorted. */
  async branches(): Promise<string[]> {
    const names = new Set<string>();
    for (const ref of (await this.packed()).keys()) if (ref.startsWith('refs/heads/')) names.add(ref.slice(11));
    const walk = async (dir: string, prefix: string): Promise<void> => {
      for (const entry of await this.store.readdir(dir)) {
        const full = joinPath(dir, entry);
        const st = await this.store.lstat(full);
        if (st?.isDirectory()) await walk(full, `${prefix}${entry}/`);
        else if (st?.isFile() && !entry.endsWith('.lock') && !entry.includes('.tmp-')) names.add(prefix + entry);
      }
    };
    await walk(this.path('refs/heads'), '');
    return [...names].sort();
  }

  private acquire(lockPath: string, content: string): Promise<void> {
    return acquireLockFile(this.store, lockPath, content, this.lock);
  }

  /**
   * Move `name` to `value` (an oid, or `ref: <target>` for a symbolic ref) under its lock.
   * `old`: the value the ref must hold now (`null`: must be absent); undefined skips the check
   * (repair of a damaged ref). Throws `REF_CONFLICT` when the ref moved meanwhile. `reflog`
   * null: no reflog entry (a ref outside those git logs, see `core.logAllRefUpdates`).
   */
  async update(
    name: string,
    value: string,
    options: { old?: string | null; reflog: { who: Identity; message: string; alsoHead?: boolean } | null },
  ): Promise<void> {
    const path = this.path(name);
    const lock = `${path}.lock`;
    await this.acquire(lock, `${value}\n`);
    let before: string | null = null;
    try {
      if (options.old !== undefined) {
        const raw = await this.readRaw(name);
        before = raw === null ? null : 'oid' in raw ? raw.oid : `ref: ${raw.symbolic}`;
        if (before !== options.old) {
          throw new EntityGitError(
            'REF_CONFLICT',
            `ref ${name} is ${before ?? 'absent'}, expected ${options.old ?? 'absent'}`,
            { ref: name, actual: before, expected: options.old },
          );
        }
      } else {
        try {
          const raw = await this.readRaw(name);
          before = raw !== null && 'oid' in raw ? raw.oid : null;
        } catch {
          before = null;
        }
      }
      await this.store.beforeRefMove();
      // The reflog entry while the ref's lock is held, before the move, as git writes it: two
      // writers' entries cannot cross (each appends under the lock), and git's `reflog expire`
      // (run by gc), which rewrites the log under the same lock, cannot drop one.
      if (!value.startsWith('ref: ') && options.reflog !== null) {
        const { who, message, alsoHead } = options.reflog;
        const entry = `${before !== null && isOid(before) ? before : ZERO_OID} ${value} ${who.name} <${who.email}> ${Math.floor(Date.now() / 1000)} +0000\t${message.replace(/\n/g, ' ')}\n`;
        // The two reflogs at once: on IndexedDB each append is a round trip.
        await Promise.all([
          this.store.append(joinPath(this.gitdir, 'logs', name), entry),
          alsoHead ? this.store.append(joinPath(this.gitdir, 'logs', 'HEAD'), entry) : null,
        ]);
      }
      await this.store.fs.rename(lock, path);
    } catch (err) {
      await this.store.remove(lock);
      throw err instanceof EntityGitError ? err : this.store.wrap(err, 'update ref', name);
    }
  }

  /** Point HEAD at `refs/heads/<branch>`, with a `checkout:` reflog entry like git's. */
  async setHead(
    branch: string,
    who: Identity,
    from: { branch: string | null; oid: string | null },
    to: string | null,
  ): Promise<void> {
    await this.update('HEAD', `ref: refs/heads/${branch}`, { reflog: { who, message: '' } });
    if (from.oid !== null || to !== null) {
      const entry = `${from.oid ?? ZERO_OID} ${to ?? ZERO_OID} ${who.name} <${who.email}> ${Math.floor(Date.now() / 1000)} +0000\tcheckout: moving from ${from.branch ?? 'nothing'} to ${branch}\n`;
      await this.store.append(joinPath(this.gitdir, 'logs', 'HEAD'), entry);
    }
  }

  async ensureDir(name: string): Promise<void> {
    await this.store.mkdirp(dirname(this.path(name)));
  }
}

/** One line of a reflog (`.git/logs/<ref>`): the ref moved from `old` to `new` (`ZERO_OID` for none). */
export interface ReflogEntry {
  readonly old: string;
  readonly new: string;
  /** `name <email>` of who moved it. */
  readonly who: string;
  /** Seconds since the epoch. */
  readonly time: number;
  /** What moved it (`commit: …`, `reset: moving to …`); `''` when none was written. */
  readonly message: string;
}

/** A reflog's text as entries, newest first; lines git would not have written are skipped. */
export function parseReflog(text: string): ReflogEntry[] {
  const out: ReflogEntry[] = [];
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]{40}) ([0-9a-f]{40}) (.*?) (-?\d+) [+-]\d{4}(?:\t(.*))?$/.exec(line);
    if (m) out.push({ old: m[1]!, new: m[2]!, who: m[3]!, time: Number(m[4]), message: m[5] ?? '' });
  }
  return out.reverse();
}
