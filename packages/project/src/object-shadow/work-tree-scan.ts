// The whole work tree as a snapshot records it, for the object engine's shadow repository: every
// file git would list (ignore rules honoured, files already in the shadow index kept however the
// rules change, as git keeps tracked files), none over the size cap, no `.git`, no nested
// repository. Stat data from the previous index spares re-reading a file that did not change.
import {
  isIgnored,
  type IgnoreStack,
  joinPath,
  type ObjectStore,
  parseIgnore,
  type Store,
  type StorageStat,
  utf8,
  type WorkIndex,
  type WorkIndexEntry,
} from '@entity-git/git';
import { statClean, statTimes } from '../object-engine/index-entries.js';
import { modeOf } from '../object-engine/worktree.js';

export interface ScanOptions {
  readonly store: Store;
  /** Where blobs are written. */
  readonly objects: ObjectStore;
  /** The work tree (the user's workdir), absolute. */
  readonly root: string;
  /** The shadow repository's git directory (its `info/exclude` is read). */
  readonly gitDir: string;
  /** Files larger than this many bytes are left out. */
  readonly maxFileBytes: number;
  /** The shadow index as it was, and its own stat (for git's racy-clean rule). */
  readonly previous: WorkIndex;
  readonly previousStat: StorageStat | null;
}

export interface ScanResult {
  /** The index entries of every recorded file, stat data included. */
  readonly entries: WorkIndexEntry[];
  /** Files left out for their size, sorted. */
  readonly overSizeCap: string[];
}

/** One pass over the work tree: what it holds, as index entries. */
export class WorkTreeScan {
  readonly #o: ScanOptions;
  readonly #known = new Map<string, WorkIndexEntry>();
  /** Directories with a file of the previous index below them: walked even when ignored (their files are tracked). */
  readonly #trackedDirs = new Set<string>();
  readonly #entries: WorkIndexEntry[] = [];
  readonly #overSizeCap: string[] = [];

  constructor(options: ScanOptions) {
    this.#o = options;
    for (const e of options.previous.entries) {
      if (e.stage !== 0) continue;
      this.#known.set(e.path, e);
      for (let i = e.path.indexOf('/'); i > 0; i = e.path.indexOf('/', i + 1))
        this.#trackedDirs.add(e.path.slice(0, i));
    }
  }

  async run(): Promise<ScanResult> {
    const exclude = parseIgnore((await this.#o.store.readText(joinPath(this.#o.gitDir, 'info', 'exclude'))) ?? '');
    await this.#walk('', [{ dir: '', rules: exclude }], false);
    return { entries: this.#entries, overSizeCap: this.#overSizeCap.sort() };
  }

  /** `ignoredAbove`: inside an ignored directory, where only files already tracked are kept. */
  async #walk(dir: string, stack: IgnoreStack, ignoredAbove: boolean): Promise<void> {
    const { store, root } = this.#o;
    const full = dir === '' ? root : joinPath(root, dir);
    const names = await store.readdir(full);
    const gitignore = names.includes('.gitignore') ? joinPath(full, '.gitignore') : null;
    const text =
      gitignore !== null && (await store.lstat(gitignore))?.isFile() ? await store.readText(gitignore) : null;
    const here: IgnoreStack = text === null ? stack : [...stack, { dir, rules: parseIgnore(text) }];
    const kept = names.filter((name) => name !== '.git').sort();
    // The stats at once: on node:fs each is a round trip to the thread pool, and most files are unchanged.
    const stats = await Promise.all(kept.map((name) => store.lstat(joinPath(full, name))));
    for (const [i, name] of kept.entries()) {
      const path = dir === '' ? name : `${dir}/${name}`;
      const st = stats[i]!;
      if (st === null) continue;
      if (st.isDirectory()) {
        // A nested repository is the user's own: never part of the project's snapshots.
        if ((await store.lstat(joinPath(full, name, '.git'))) !== null) continue;
        const ignored = ignoredAbove || isIgnored(here, path, true);
        if (!ignored || this.#trackedDirs.has(path)) await this.#walk(path, here, ignored);
      } else if (st.isFile() || (st.isSymbolicLink() && store.fs.readlink)) {
        // A link on a file system that cannot read links is left out, as an unreadable file would be.
        if (!this.#known.has(path) && (ignoredAbove || isIgnored(here, path, false))) continue;
        await this.#record(path, st);
      }
    }
  }

  async #record(path: string, st: StorageStat): Promise<void> {
    const { store, objects, root, maxFileBytes, previousStat } = this.#o;
    if (st.isFile() && st.size > maxFileBytes) {
      this.#overSizeCap.push(path);
      return;
    }
    const mode = modeOf(st, true, undefined);
    const known = this.#known.get(path);
    let oid: string;
    if (known !== undefined && known.mode === mode && statClean(known, st, previousStat)) oid = known.oid;
    else {
      const full = joinPath(root, path);
      const data = st.isSymbolicLink() ? utf8(await store.fs.readlink!(full)) : await store.read(full);
      if (data === null) return;
      oid = await objects.write('blob', data);
    }
    const t = statTimes(st);
    this.#entries.push({
      ctimeSec: t.ctimeSec,
      ctimeNsec: t.ctimeNsec,
      mtimeSec: t.mtimeSec,
      mtimeNsec: t.mtimeNsec,
      dev: st.dev ?? 0,
      ino: st.ino ?? 0,
      mode,
      uid: st.uid ?? 0,
      gid: st.gid ?? 0,
      size: st.size,
      oid,
      stage: 0,
      assumeValid: false,
      skipWorktree: false,
      intentToAdd: false,
      path,
    });
  }
}
