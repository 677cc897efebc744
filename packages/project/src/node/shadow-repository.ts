// A project's shadow repository: a private git repository under entity-git's root whose work tree
// is the user's workdir, with its own git directory and its own persistent index (stat data, so a
// snapshot re-hashes only what changed). It never writes inside the workdir or its .git; only a
// restore (shadow-restore.ts) writes files there. docs/design.md §7, "Shadow mode".
import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EntityGitError } from '@entity-git/core';
import { LOCK_DEFAULTS, RefStore, Store, refsUnder } from '@entity-git/git';
import { nodeStorage } from '@entity-git/node-fs';
import { rm as rmSliced, slicedNodeStorage } from './shadow-sliced-fs.js';
import { ShadowGit } from './shadow-git.js';
import { traced } from './shadow-trace.js';
import { carriedOver, INDEX_BEHIND, type InProcessSnapshot, InProcessSnapshots } from './shadow-in-process.js';
import { type SnapshotTrailers, snapshotMessage } from '../shadow-message.js';
import { type FastPath, type SnapshotState, snapshotState } from './shadow-snapshot-state.js';
import { DEFAULT_MAX_FILE_BYTES, SNAPSHOTS_REF } from '../shadow-names.js';

export { DEFAULT_MAX_FILE_BYTES, SNAPSHOTS_REF } from '../shadow-names.js';

export interface ShadowRepositoryOptions {
  /** entity-git's directory for shadow repositories (one sub-directory per project). */
  root: string;
  /** The user's workdir (absolute). It need not be a git repository. */
  workdir: string;
  /** Files larger than this many bytes are left out of snapshots. Default 5 MiB. */
  maxFileBytes?: number;
  /** The git binary. Default `git`. */
  gitPath?: string;
  /** How long one git command may run, and how long to wait for another process's hold on the project. Default 120 s. */
  timeoutMs?: number;
  /**
   * Watch the work tree while this process runs, so a snapshot examines only what changed since
   * the previous one (docs/design.md §7, "When a snapshot trusts the watcher"). Default true.
   */
  watch?: boolean;
}

export interface Snapshot {
  readonly commit: string;
  /** Files left out for being over the size cap. */
  readonly overSizeCap: readonly string[];
}

/** Where a workdir's shadow repository lives: a hash of its real path, so any spelling finds it. */
export async function shadowDirOf(root: string, workdir: string): Promise<string> {
  const real = await realpath(workdir);
  return join(root, createHash('sha256').update(real).digest('hex').slice(0, 32));
}

/** One queue per git directory in this process: snapshots and restores of a project never overlap. */
const queues = new Map<string, Promise<unknown>>();

interface Parts {
  git: ShadowGit;
  inProcess: InProcessSnapshots;
  dir: string;
  workdir: string;
  maxFileBytes: number;
  state: SnapshotState | null;
}

export class ShadowRepository {
  readonly #git: ShadowGit;
  readonly #inProcess: InProcessSnapshots;
  readonly #maxFileBytes: number;
  readonly #state: SnapshotState | null;
  readonly #lock: <T>(key: string, fn: () => Promise<T>) => Promise<T>;
  readonly #store = new Store(slicedNodeStorage);
  readonly #refs: RefStore;
  readonly dir: string;
  readonly workdir: string;

  private constructor(parts: Parts) {
    this.#git = parts.git;
    this.#inProcess = parts.inProcess;
    this.dir = parts.dir;
    this.workdir = parts.workdir;
    this.#maxFileBytes = parts.maxFileBytes;
    this.#state = parts.state;
    this.#refs = new RefStore(this.#store, join(parts.dir, 'git'));
    // The storages' file lock (refreshed while held, taken over only from a dead holder), waited
    // for as long as one git command may run: another process's first snapshot of a large tree.
    const timeoutMs = Math.max(parts.git.place.timeoutMs, LOCK_DEFAULTS.sync.timeoutMs);
    const storage = nodeStorage({ syncLock: { timeoutMs, staleMs: LOCK_DEFAULTS.sync.staleMs } });
    // nodeStorage always has a file lock (withLock is optional only in the Storage seam).
    this.#lock = (key, fn) => storage.withLock!(key, fn);
  }

  /** Opens the workdir's shadow repository, creating it (0700) the first time. */
  static async open(options: ShadowRepositoryOptions): Promise<ShadowRepository> {
    const info = await stat(options.workdir).catch(() => null);
    if (!info?.isDirectory())
      throw new EntityGitError('INVALID_WORKDIR', `not a directory: ${options.workdir}`, { workdir: options.workdir });
    const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    if (!Number.isSafeInteger(maxFileBytes) || maxFileBytes < 0)
      throw new EntityGitError('INVALID_OPTION', `maxFileBytes must be a whole number ≥ 0, got ${maxFileBytes}`, {});
    const workdir = await realpath(options.workdir);
    const dir = await shadowDirOf(options.root, workdir);
    const git = new ShadowGit({
      gitDir: join(dir, 'git'),
      workTree: workdir,
      gitPath: options.gitPath ?? 'git',
      timeoutMs: options.timeoutMs ?? 120_000,
    });
    const state = options.watch === false ? null : snapshotState(join(dir, 'git'), workdir, dir);
    const inProcess = new InProcessSnapshots(dir, workdir);
    const repo = new ShadowRepository({ git, inProcess, dir, workdir, maxFileBytes, state });
    await repo.#create();
    return repo;
  }

  get git(): ShadowGit {
    return this.#git;
  }

  /**
   * Points each ref at its commit, in-process as git's `update-ref` would (its lock, then a
   * rename; no reflog: `core.logAllRefUpdates` is off here): a turn's refs cost no git process.
   */
  async setRefs(refs: ReadonlyArray<readonly [ref: string, commit: string]>): Promise<void> {
    await Promise.all(refs.map(([ref, commit]) => this.#refs.update(ref, commit, { reflog: null })));
  }

  /** The refs under `prefix` (`refs/turns/`), loose and packed, name → commit. */
  refsUnder(prefix: string): Promise<Map<string, string>> {
    return refsUnder(this.#store, join(this.dir, 'git'), prefix);
  }

  // The `workdir` file is written last: its presence says the repository was made whole. Two
  // processes making it at once take turns under the project's lock (each step is idempotent, so
  // one interrupted half way is made again whole).
  async #create(): Promise<void> {
    const made = join(this.dir, 'workdir');
    if (await stat(made).catch(() => null)) return;
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
    await this.exclusive(async () => {
      if (!(await stat(made).catch(() => null))) await this.#make();
    });
  }

  async #make(): Promise<void> {
    const gitDir = join(this.dir, 'git');
    await this.#git.git(['init', '-q', '--shared=0600', '--initial-branch=snapshots', gitDir]);
    await this.#git.git(['config', 'core.bare', 'false']);
    await this.#git.git(['config', 'core.logAllRefUpdates', 'false']);
    // The untracked cache lets status skip directories whose mtime did not change since the last.
    await this.#git.git(['update-index', '--untracked-cache']);
    // info/attributes outranks every .gitattributes of the workdir: the bytes are kept as they are.
    const attributes = '* -text -eol -filter -ident -working-tree-encoding\n';
    await writeFile(join(gitDir, 'info', 'attributes'), attributes, { mode: 0o600 });
    await writeFile(join(this.dir, 'workdir'), `${this.workdir}\n`, { mode: 0o600 });
  }

  /**
   * Runs `work` alone on this project: queued behind this process's other calls, then holding the
   * project's lock file (`<dir>/lock`) against other processes.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const key = this.#git.place.gitDir;
    const prev = queues.get(key) ?? Promise.resolve();
    const held = () =>
      this.#lock(join(this.dir, 'lock'), async () => {
        await traced('clear-dead-locks', () => this.#clearDeadLocks());
        return work();
      });
    const next = prev.then(held, held);
    const settled = next.catch(() => undefined);
    queues.set(key, settled);
    void settled.then(() => {
      if (queues.get(key) === settled) queues.delete(key);
    });
    return next;
  }

  /**
   * Every writer of a shadow repository holds the project's lock, so a git lock file found by its
   * holder is a killed writer's (a snapshot killed between taking the ref's lock and moving the
   * ref): git would refuse to go on while it stays, so it goes.
   */
  async #clearDeadLocks(): Promise<void> {
    const gitDir = this.#git.place.gitDir;
    await Promise.all(['index.lock', `${SNAPSHOTS_REF}.lock`].map((name) => rmSliced(join(gitDir, name))));
  }

  /** The newest snapshot commit, or null before the first. */
  async tip(): Promise<string | null> {
    const r = await this.#git.run(['rev-parse', '-q', '--verify', `${SNAPSHOTS_REF}^{commit}`]);
    return r.code === 0 ? r.stdout.toString('utf8').trim() : null;
  }

  /**
   * Snapshots the whole work tree, as a tree and a commit on {@link SNAPSHOTS_REF}. When this
   * process's watcher vouches for the interval since its own last snapshot, the paths it saw
   * change are examined in-process and the snapshot written with no git process at all (none
   * changed: a before-snapshot reuses the tip). Otherwise the persistent index learns what changed
   * (git status compares stat data; only changed files are hashed) and git writes the snapshot; a
   * before-snapshot whose tree equals the tip's reuses the tip.
   */
  snapshot(trailers: SnapshotTrailers): Promise<Snapshot> {
    return traced('snapshot', () => this.exclusive(() => traced('held', () => this.snapshotHeld(trailers))));
  }

  /** {@link snapshot} for a caller already inside {@link exclusive}. */
  async snapshotHeld(trailers: SnapshotTrailers): Promise<Snapshot> {
    const state = this.#state;
    const fast = state === null ? null : await traced('begin', () => state.begin(this.#maxFileBytes));
    const quick = fast === null ? null : await traced('in-process', () => this.#quick(trailers, fast));
    const taken = quick ?? (await traced('git', () => this.#take(trailers, fast)));
    if (state !== null) {
      const listedAgain = quick?.listedAgain ?? (await this.#listedAgain(taken));
      await traced('remember', () => state.remember(taken.commit, this.#maxFileBytes, listedAgain));
    }
    return quick === null ? taken : { commit: quick.commit, overSizeCap: quick.overSizeCap };
  }

  /** The snapshot in-process, or null when only git can say what the changed paths hold. */
  async #quick(trailers: SnapshotTrailers, fast: FastPath): Promise<InProcessSnapshot | null> {
    // Nothing seen changing since this process's own last snapshot: the work tree and the tip's tree are one.
    if (fast.paths.length === 0 && trailers.kind === 'before') {
      const overSizeCap = [...fast.last.overSizeCap].sort();
      return { commit: fast.last.tip, overSizeCap, listedAgain: overSizeCap };
    }
    const taken = await this.#inProcess.take(trailers, fast, this.#maxFileBytes);
    return 'refused' in taken ? null : taken;
  }

  /**
   * The files over the cap that a full walk would list again while they stay as they are: those
   * status still sees, untracked and not ignored (one left out is removed from the index, so once
   * ignored it drops out of a walk's list, and must of the fast path's too).
   */
  async #listedAgain(taken: Snapshot): Promise<string[]> {
    if (taken.overSizeCap.length === 0) return [];
    // `ls-files --ignored` rather than `check-ignore`, which refuses the literal pathspecs every
    // shadow git call runs with.
    const listed = await this.#git.git([
      'ls-files',
      '-z',
      '--others',
      '--ignored',
      '--exclude-standard',
      '--',
      ...taken.overSizeCap,
    ]);
    const ignored = new Set(listed.split('\0'));
    return taken.overSizeCap.filter((p) => !ignored.has(p));
  }

  /**
   * Brings an index the in-process path left behind up to the tip, keeping the stat data of every
   * entry whose blob did not change (`read-tree -m` of one tree): what the tip tracks, the index
   * tracks again, so a walk and the fast path agree on what is tracked.
   */
  async #catchUp(): Promise<void> {
    const mark = join(this.dir, INDEX_BEHIND);
    if ((await stat(mark).catch(() => null)) === null) return;
    await this.#git.git(['read-tree', '-m', '-i', SNAPSHOTS_REF]);
    await rm(mark, { force: true });
  }

  async #take(trailers: SnapshotTrailers, fast: FastPath | null): Promise<Snapshot> {
    await this.#catchUp();
    const { tip: parent, changes, overSizeCap } = await this.#stage(fast);
    // Nothing listed: the work tree, the index and the tip's tree are one (status compares all three).
    if (parent !== null && changes === 0 && trailers.kind === 'before') return { commit: parent, overSizeCap };
    const tree = changes === 0 && parent !== null ? `${parent}^{tree}` : (await this.#git.git(['write-tree'])).trim();
    if (parent !== null && trailers.kind === 'before') {
      const parentTree = (await this.#git.git(['rev-parse', `${parent}^{tree}`])).trim();
      if (parentTree === tree) return { commit: parent, overSizeCap };
    }
    const parentArgs = trailers.before ?? parent;
    const message = snapshotMessage({ ...trailers, overSizeCap });
    const commit = (
      await this.#git.git(['commit-tree', tree, ...(parentArgs ? ['-p', parentArgs] : []), '-F', '-'], message)
    ).trim();
    await this.#git.git(['update-ref', SNAPSHOTS_REF, commit, parent ?? '']);
    return { commit, overSizeCap };
  }

  /**
   * Brings the index up to the work tree, with one `git status` (porcelain v2: its header also
   * names the tip, sparing a process), over the whole tree or, when the in-process path left the
   * watcher's paths to git, over those paths (a directory's path covers all under it). Returns the
   * tip, how many paths status listed, and the files left out for their size.
   */
  async #stage(fast: FastPath | null): Promise<{ tip: string | null; changes: number; overSizeCap: string[] }> {
    const status = await this.#git.git([
      'status',
      '--porcelain=v2',
      '--branch',
      '-z',
      '--untracked-files=all',
      '--no-renames',
      '--ignore-submodules=all',
      ...(fast ? ['--', ...fast.paths] : []),
    ]);
    const { tip, removed, changed } = parseStatus(status);
    const changes = removed.length + changed.length;
    const overSizeCap: string[] = [];
    const added: string[] = [];
    await Promise.all(
      changed.map(async (path) => {
        const info = await lstat(join(this.workdir, path)).catch(() => null);
        if (info === null) removed.push(path);
        else if (info.isFile() && info.size > this.#maxFileBytes) overSizeCap.push(path);
        else added.push(path);
      }),
    );
    // Removals first, so a file that became a directory (or the reverse) is replaced cleanly.
    const input = `${[...removed, ...overSizeCap].map((p) => `${p}\0`).join('')}`;
    if (input) await this.#git.git(['update-index', '--force-remove', '-z', '--stdin'], input);
    if (added.length)
      await this.#git.git(['update-index', '--add', '--remove', '--replace', '-z', '--stdin'], `${added.join('\0')}\0`);
    return { tip, changes, overSizeCap: fast ? carriedOver(fast, overSizeCap) : overSizeCap.sort() };
  }

  /** The blob ids of `paths` in a commit (absent: not in it). */
  async blobs(commit: string, paths: readonly string[]): Promise<Map<string, { mode: string; oid: string }>> {
    const out = new Map<string, { mode: string; oid: string }>();
    if (paths.length === 0) return out;
    const text = await this.#git.git(['ls-tree', '-z', '--full-tree', commit, '--', ...paths]);
    for (const row of text.split('\0')) {
      const m = /^(\d+) \w+ ([0-9a-f]+)\t([\s\S]*)$/.exec(row);
      if (m) out.set(m[3] as string, { mode: m[1] as string, oid: m[2] as string });
    }
    return out;
  }

  /** The bytes of a blob. */
  async blob(oid: string): Promise<Buffer> {
    const r = await this.#git.run(['cat-file', 'blob', oid]);
    if (r.code !== 0) throw this.#git.failure(['cat-file'], r);
    return r.stdout;
  }

  /** The workdir file's bytes, or null when there is none. */
  async readWorkdir(path: string): Promise<Buffer | null> {
    return readFile(join(this.workdir, path)).catch(() => null);
  }
}

/** Porcelain v2 status: the tip (`# branch.oid`), the paths gone and the paths changed or new. */
function parseStatus(status: string): { tip: string | null; removed: string[]; changed: string[] } {
  let tip: string | null = null;
  const removed: string[] = [];
  const changed: string[] = [];
  for (const entry of status.split('\0')) {
    if (entry.startsWith('# branch.oid ')) {
      const oid = entry.slice('# branch.oid '.length);
      tip = /^[0-9a-f]{40,64}$/.test(oid) ? oid : null;
    } else if (entry.startsWith('? ')) {
      // An untracked directory is listed whole only when it is a nested repository: the user's own,
      // never part of a snapshot (as in the object engine's; \`update-index\` refuses one without a commit).
      if (!entry.endsWith('/')) changed.push(entry.slice(2));
    } else if (entry.startsWith('1 ')) {
      // 1 XY sub mH mI mW hH hI path: the path follows the eighth space.
      let at = 0;
      for (let i = 0; i < 8; i++) at = entry.indexOf(' ', at) + 1;
      const path = entry.slice(at);
      if (entry[3] === 'D' || (entry[2] === 'D' && entry[3] === '.')) removed.push(path);
      else changed.push(path);
    }
  }
  return { tip, removed, changed };
}
