// A project's shadow repository on the object engine: the same layout as the native engine's
// (`<root>/<hash of the workdir's real path>/git`, its own index, the workdir as work tree), written
// through a `Storage` — IndexedDB in the browser, node:fs without a git binary. It never writes
// inside the workdir or its `.git`; only a restore (restore.ts) writes files there.
// docs/design.md §7, "Shadow mode" and "The object engine's shadow mode".
import {
  acquireLockFile,
  buildCommit,
  LOCK_DEFAULTS,
  type LockOptions,
  buildTree,
  type Codec,
  EntityGitError,
  joinPath,
  ObjectStore,
  parseCommit,
  type ParsedCommit,
  portableCodec,
  readWorkIndex,
  RefStore,
  refsUnder,
  type Storage,
  Store,
  type StorageStat,
  type TreeEntry,
  type WorkIndex,
  type WorkIndexEntry,
  writeWorkIndex,
} from '@entity-git/git';
import { entriesAt } from '../object-engine/commit.js';
import { normalizeAbsolute } from '../paths.js';
import { snapshotMessage, type SnapshotTrailers } from '../shadow-message.js';
import { DEFAULT_MAX_FILE_BYTES, SHADOW_IDENTITY, SNAPSHOTS_REF, shadowDirName } from '../shadow-names.js';
import { WorkTreeScan } from './work-tree-scan.js';
import type { Version } from '../shadow-restore-rules.js';

export interface ObjectShadowRepositoryOptions {
  /** The storage holding both the workdir and the shadow root. */
  storage: Storage;
  /** entity-git's directory for shadow repositories (one sub-directory per project). */
  root: string;
  /** The user's workdir (absolute). It need not be a git repository. */
  workdir: string;
  /** Files larger than this many bytes are left out of snapshots. Default 5 MiB. */
  maxFileBytes?: number;
  /** Hashing and compression. Default: the storage's, else the portable pure-JS codec. */
  codec?: Codec;
  /** The clock of snapshot commits, in ms. Default `Date.now`. */
  now?: () => number;
  /** The shadow index's and refs' lock files: how long to wait, and when one is a dead writer's. Default `LOCK_DEFAULTS.ref`. */
  lock?: LockOptions;
}

export interface Snapshot {
  readonly commit: string;
  /** Files left out for being over the size cap. */
  readonly overSizeCap: readonly string[];
}

const SHADOW_CONFIG =
  '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = false\n';
/** Outranks every .gitattributes of the workdir, for native git reading the repository: the bytes are kept as they are. */
const SHADOW_ATTRIBUTES = '* -text -eol -filter -ident -working-tree-encoding\n';

/** The path with every symbolic link resolved, as `realpath` gives it (the shadow directory is named after it). */
async function realPath(store: Store, path: string): Promise<string> {
  const parts = normalizeAbsolute(path).split('/').filter(Boolean);
  let done = '';
  for (let hops = 0; parts.length > 0; ) {
    const next = `${done}/${parts.shift()!}`;
    const st = await store.lstat(next);
    if (st?.isSymbolicLink() && store.fs.readlink && hops++ < 40) {
      const target = await store.fs.readlink(next);
      parts.unshift(...target.split('/').filter(Boolean));
      if (target.startsWith('/')) done = '';
      continue;
    }
    done = next;
  }
  return normalizeAbsolute(done || '/');
}

/** One queue per shadow git directory in this realm: snapshots and restores of a project never overlap. */
const queues = new Map<string, Promise<unknown>>();

export class ObjectShadowRepository {
  readonly #store: Store;
  readonly #objects: ObjectStore;
  readonly #refs: RefStore;
  readonly #maxFileBytes: number;
  readonly #now: () => number;
  readonly #lock: LockOptions;
  /** The project's directory under the shadow root. */
  readonly dir: string;
  /** Its git directory. */
  readonly gitDir: string;
  /** The workdir, symbolic links resolved. */
  readonly workdir: string;

  private constructor(
    store: Store,
    options: { dir: string; workdir: string; maxFileBytes: number; now: () => number; lock: LockOptions },
  ) {
    this.#store = store;
    this.dir = options.dir;
    this.gitDir = joinPath(options.dir, 'git');
    this.workdir = options.workdir;
    this.#maxFileBytes = options.maxFileBytes;
    this.#now = options.now;
    this.#lock = options.lock;
    this.#objects = new ObjectStore(store, this.gitDir);
    this.#refs = new RefStore(store, this.gitDir, options.lock);
  }

  /** Opens the workdir's shadow repository, creating it the first time. */
  static async open(options: ObjectShadowRepositoryOptions): Promise<ObjectShadowRepository> {
    const store = new Store({ ...options.storage, codec: options.codec ?? options.storage.codec ?? portableCodec });
    const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    if (!Number.isSafeInteger(maxFileBytes) || maxFileBytes < 0)
      throw new EntityGitError('INVALID_OPTION', `maxFileBytes must be a whole number ≥ 0, got ${maxFileBytes}`, {});
    const info = await store.fs.stat(normalizeAbsolute(options.workdir)).catch(() => null);
    if (!info?.isDirectory())
      throw new EntityGitError('INVALID_WORKDIR', `not a directory: ${options.workdir}`, { workdir: options.workdir });
    const workdir = await realPath(store, options.workdir);
    const dir = await ObjectShadowRepository.dirOf(store, options.root, workdir);
    const repo = new ObjectShadowRepository(store, {
      dir,
      workdir,
      maxFileBytes,
      now: options.now ?? Date.now,
      lock: options.lock ?? LOCK_DEFAULTS.ref,
    });
    await repo.#create();
    return repo;
  }

  /** Where a workdir's shadow repository lives: a hash of its real path, so any spelling finds it (as the native engine names it). */
  static async dirOf(store: Store, root: string, workdir: string): Promise<string> {
    return joinPath(normalizeAbsolute(root), await shadowDirName(await realPath(store, workdir)));
  }

  get store(): Store {
    return this.#store;
  }

  async #create(): Promise<void> {
    const store = this.#store;
    if ((await store.lstat(joinPath(this.gitDir, 'HEAD'))) !== null) return;
    for (const d of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags', 'info'])
      await store.mkdirp(joinPath(this.gitDir, d));
    await store.writeAtomic(joinPath(this.gitDir, 'config'), SHADOW_CONFIG);
    await store.writeAtomic(joinPath(this.gitDir, 'info', 'attributes'), SHADOW_ATTRIBUTES);
    await store.writeAtomic(joinPath(this.dir, 'workdir'), `${this.workdir}\n`);
    // HEAD last: it is what marks the repository as made.
    await store.writeAtomic(joinPath(this.gitDir, 'HEAD'), `ref: ${SNAPSHOTS_REF}\n`);
  }

  /** Runs `work` alone among this realm's calls on this project. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const key = this.gitDir;
    const prev = queues.get(key) ?? Promise.resolve();
    const next = prev.then(work, work);
    const settled = next.catch(() => undefined);
    queues.set(key, settled);
    void settled.then(() => {
      if (queues.get(key) === settled) queues.delete(key);
    });
    return next;
  }

  /** The newest snapshot commit, or null before the first. */
  tip(): Promise<string | null> {
    return this.#refs.resolve(SNAPSHOTS_REF);
  }

  resolve(ref: string): Promise<string | null> {
    return this.#refs.resolve(ref);
  }

  /** Sets `ref` to `oid` (no reflog: `core.logAllRefUpdates` is off in a shadow repository). */
  setRef(ref: string, oid: string): Promise<void> {
    return this.#refs.update(ref, oid, { reflog: null });
  }

  /** Deletes a loose ref (the shadow repository never packs its refs). */
  async deleteRef(ref: string): Promise<void> {
    await this.#store.remove(joinPath(this.gitDir, ref));
  }

  /** Refs under `prefix` (`refs/turns/`), name → commit. */
  refsUnder(prefix: string): Promise<Map<string, string>> {
    return refsUnder(this.#store, this.gitDir, prefix);
  }

  async commit(oid: string): Promise<ParsedCommit> {
    return parseCommit(await this.#objects.readTyped(oid, 'commit'));
  }

  get objects(): ObjectStore {
    return this.#objects;
  }

  /**
   * Snapshots the whole work tree: files whose stat data matches the shadow index are not read,
   * the others are hashed and stored; then the index, a tree and a commit on {@link SNAPSHOTS_REF}.
   * A before-snapshot whose tree equals the tip's reuses the tip.
   */
  snapshot(trailers: SnapshotTrailers): Promise<Snapshot> {
    return this.exclusive(() => this.snapshotHeld(trailers));
  }

  /** {@link snapshot} for a caller already inside {@link exclusive}. */
  async snapshotHeld(trailers: SnapshotTrailers): Promise<Snapshot> {
    const parent = await this.tip();
    const { tree, overSizeCap } = await this.#stage();
    if (parent !== null && trailers.kind === 'before' && (await this.commit(parent)).tree === tree)
      return { commit: parent, overSizeCap };
    const base = trailers.before ?? parent;
    const who = { ...SHADOW_IDENTITY, time: Math.floor(this.#now() / 1000) };
    const message = snapshotMessage({ ...trailers, overSizeCap });
    const commit = await this.#objects.write(
      'commit',
      buildCommit({ tree, parents: base ? [base] : [], author: who, committer: who, message }),
    );
    await this.#refs.update(SNAPSHOTS_REF, commit, { old: parent, reflog: null });
    return { commit, overSizeCap };
  }

  /** Brings the shadow index up to the work tree and writes its tree. */
  async #stage(): Promise<{ tree: string; overSizeCap: string[] }> {
    const { index, stat } = await this.#readIndex();
    const scan = new WorkTreeScan({
      store: this.#store,
      objects: this.#objects,
      root: this.workdir,
      gitDir: this.gitDir,
      maxFileBytes: this.#maxFileBytes,
      previous: index,
      previousStat: stat,
    });
    const { entries, overSizeCap } = await scan.run();
    const tree = await this.#writeTree(entries);
    const next: WorkIndex = { version: 2, entries, extensions: [] };
    // Under git's index.lock, as native git writes an index: another process's snapshot (either engine's) waits.
    const indexPath = joinPath(this.gitDir, 'index');
    await acquireLockFile(this.#store, `${indexPath}.lock`, writeWorkIndex(next, this.#store.codec), this.#lock);
    try {
      await this.#store.fs.rename(`${indexPath}.lock`, indexPath);
    } catch (err) {
      await this.#store.remove(`${indexPath}.lock`);
      throw err;
    }
    return { tree, overSizeCap };
  }

  async #readIndex(): Promise<{ index: WorkIndex; stat: StorageStat | null }> {
    const path = joinPath(this.gitDir, 'index');
    const [data, stat] = await Promise.all([this.#store.read(path), this.#store.lstat(path)]);
    if (data === null) return { index: { version: 2, entries: [], extensions: [] }, stat: null };
    return { index: readWorkIndex(data, this.#store.codec), stat };
  }

  /** The tree of `entries` (paths with `/`), written bottom-up as `git write-tree` writes it. */
  async #writeTree(entries: readonly WorkIndexEntry[]): Promise<string> {
    const dirs = new Map<string, TreeEntry[]>([['', []]]);
    const dirOf = (dir: string): TreeEntry[] => {
      let list = dirs.get(dir);
      if (list === undefined) {
        dirs.set(dir, (list = []));
        const slash = dir.lastIndexOf('/');
        dirOf(slash < 0 ? '' : dir.slice(0, slash));
      }
      return list;
    };
    for (const e of entries) {
      const slash = e.path.lastIndexOf('/');
      const name = e.path.slice(slash + 1);
      dirOf(slash < 0 ? '' : e.path.slice(0, slash)).push({ mode: e.mode.toString(8), name, oid: e.oid });
    }
    // Deepest first, so each subtree exists before its parent names it.
    const depth = (dir: string) => (dir === '' ? 0 : dir.split('/').length);
    const order = [...dirs.keys()].sort((a, b) => depth(b) - depth(a));
    let root = '';
    for (const dir of order) {
      const oid = await this.#objects.write('tree', buildTree(dirs.get(dir)!));
      if (dir === '') root = oid;
      else {
        const slash = dir.lastIndexOf('/');
        dirs.get(slash < 0 ? '' : dir.slice(0, slash))!.push({ mode: '40000', name: dir.slice(slash + 1), oid });
      }
    }
    return root;
  }

  /** The versions of `paths` in a snapshot (absent: not in it). */
  async blobs(commit: string, paths: readonly string[]): Promise<Map<string, Version>> {
    const out = new Map<string, Version>();
    for (const f of await entriesAt(this.#objects, commit, paths))
      if (f.oid !== null) out.set(f.path, { mode: f.mode!, oid: f.oid });
    return out;
  }

  /** The bytes of a blob. */
  blob(oid: string): Promise<Uint8Array> {
    return this.#objects.readTyped(oid, 'blob');
  }
}
