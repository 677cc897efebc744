import {
  acquireLockFile,
  configBool,
  dirname,
  EntityGitError,
  fromUtf8,
  type GitConfig,
  joinPath,
  ObjectStore,
  parseGitConfig,
  portableCodec,
  RefStore,
  readWorkIndex,
  type Codec,
  type Storage,
  type StorageFs,
  type StorageStat,
  Store,
  utf8,
  type WorkIndex,
  writeWorkIndex,
} from '@entity-git/git';
import type { FileState, RepoState } from '../project-git-engine.js';
import { normalizeAbsolute } from '../paths.js';
import { modeOf } from './worktree.js';

/** The engine's name, as results and messages show it. */
export const OBJECT_ENGINE = 'object';

export interface ObjectEngineOptions {
  /**
   * The storage the repositories live on. A full {@link Storage} gives create-exclusive lock files
   * that hold across processes (Node's `open(…, 'wx')`); with a bare `fs` they hold within the
   * caller's project lock only.
   */
  storage?: Storage;
  /** A bare file system, when no {@link Storage} is given. */
  fs?: StorageFs;
  /** Hashing and compression. Default: the storage's, else the portable pure-JS codec. */
  codec?: Codec;
  /** How long to wait for a `<ref>.lock` or `index.lock` another git holds. Default 10 s. */
  lockTimeoutMs?: number;
}

/** A path's content as git would record it, with the stat taken before reading it (so a later write shows as a change). */
export interface Captured {
  readonly state: FileState;
  readonly st: StorageStat | null;
  readonly data: Uint8Array | null;
}

const resolvePath = (base: string, p: string) =>
  normalizeAbsolute(p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) ? p : `${base}/${p}`);

/**
 * The files of a user's repository as the object engine reads and writes them: git's own files
 * (HEAD, config, the index under `index.lock`, objects, refs) and the working tree's.
 */
export class RepoFiles {
  readonly #store: Store;
  readonly #codec: Codec;
  readonly #lockTimeoutMs: number;

  constructor(options: ObjectEngineOptions) {
    const storage: Storage = options.storage ?? { name: OBJECT_ENGINE, fs: options.fs! };
    if (!storage.fs) throw new EntityGitError('INVALID_OPTION', 'createObjectEngine needs a storage or an fs');
    this.#codec = options.codec ?? storage.codec ?? portableCodec;
    this.#store = new Store({ ...storage, codec: this.#codec });
    this.#lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
  }

  get store(): Store {
    return this.#store;
  }

  get fs(): StorageFs {
    return this.#store.fs;
  }

  /** Throw `err` as a `PROJECT_GIT_ERROR` naming `what` (an `EntityGitError` as it is). */
  fail(what: string, err: unknown, data: Record<string, unknown> = {}): never {
    if (err instanceof EntityGitError) throw err;
    throw new EntityGitError(
      'PROJECT_GIT_ERROR',
      `[${OBJECT_ENGINE}] ${what}: ${(err as Error)?.message ?? String(err)}`,
      data,
      { cause: err },
    );
  }

  readText(p: string): Promise<string | null> {
    return this.#store.readText(p);
  }

  /** A file's text; null when absent or not a file (a `.gitignore` that is a directory counts for nothing, as in git). */
  async readFileText(p: string): Promise<string | null> {
    return (await this.#store.lstat(p))?.isFile() ? this.#store.readText(p) : null;
  }

  async isDir(p: string): Promise<boolean> {
    return (await this.#store.lstat(p))?.isDirectory() === true;
  }

  blobOid(content: Uint8Array): string {
    return new ObjectStore(this.#store, '/').hash('blob', content);
  }

  objects(commonDir: string): ObjectStore {
    return new ObjectStore(this.#store, commonDir);
  }

  /** Refs of the user's repository: a lock file there is git's to judge, never taken over however old (git tells the user to remove it). */
  userRefs(commonDir: string): RefStore {
    return new RefStore(this.#store, commonDir, { timeoutMs: this.#lockTimeoutMs, staleMs: Number.POSITIVE_INFINITY });
  }

  /** A git directory git would accept: HEAD, plus objects and refs (here or in the common directory). */
  async isGitDir(dir: string): Promise<boolean> {
    const head = await this.readText(joinPath(dir, 'HEAD'));
    if (head === null || !(head.startsWith('ref: ') || /^[0-9a-f]{40}\s*$/.test(head))) return false;
    const common = await this.commonDirOf(dir);
    return (await this.isDir(joinPath(common, 'objects'))) && (await this.isDir(joinPath(common, 'refs')));
  }

  async commonDirOf(gitdir: string): Promise<string> {
    const rel = (await this.readText(joinPath(gitdir, 'commondir')))?.trim();
    return rel ? resolvePath(gitdir, rel) : gitdir;
  }

  /** `<dir>/.git` as a git directory (a directory, or a `gitdir:` file), or null. */
  async dotGit(dir: string): Promise<string | null> {
    const path = joinPath(dir, '.git');
    const st = await this.#store.lstat(path);
    if (st === null) return null;
    if (st.isDirectory()) return (await this.isGitDir(path)) ? path : null;
    const text = await this.readText(path);
    const m = text === null ? null : /^gitdir:\s*(.+?)\s*$/m.exec(text);
    if (!m) return null;
    const gitdir = resolvePath(dir, m[1]!);
    return (await this.isGitDir(gitdir)) ? gitdir : null;
  }

  async loadConfig(commonDir: string, gitdir: string): Promise<GitConfig> {
    const main = parseGitConfig((await this.readText(joinPath(commonDir, 'config'))) ?? '');
    if (!configBool(main, 'extensions.worktreeconfig', false)) return main;
    const merged = new Map(main);
    for (const [k, v] of parseGitConfig((await this.readText(joinPath(gitdir, 'config.worktree'))) ?? ''))
      merged.set(k, [...(merged.get(k) ?? []), ...v]);
    return merged;
  }

  /** `core.filemode` of the repository (whether the executable bit is tracked). */
  async fileModeOf(repo: RepoState): Promise<boolean> {
    return configBool(await this.loadConfig(repo.commonDir, repo.gitdir), 'core.filemode', true);
  }

  async readIndex(gitdir: string): Promise<{ index: WorkIndex; mtime: StorageStat | null }> {
    const path = joinPath(gitdir, 'index');
    const [data, mtime] = await Promise.all([this.#store.read(path), this.#store.lstat(path)]);
    if (data === null) return { index: { version: 2, entries: [], extensions: [] }, mtime: null };
    return { index: readWorkIndex(data, this.#codec), mtime };
  }

  /**
   * Run `fn` holding the repository's `index.lock` — waited for while someone else holds it, never
   * taken over. `fn` writes the new index through `writeIndex` (renamed over the index); a lock it
   * did not turn into the index is removed.
   */
  async underIndexLock<T>(
    gitdir: string,
    fn: (writeIndex: (index: WorkIndex) => Promise<void>) => Promise<T>,
  ): Promise<T> {
    const indexPath = joinPath(gitdir, 'index');
    const lockPath = `${indexPath}.lock`;
    const lock = { timeoutMs: this.#lockTimeoutMs, staleMs: Number.POSITIVE_INFINITY };
    await acquireLockFile(this.#store, lockPath, '', lock);
    let held = true;
    try {
      return await fn(async (index) => {
        await this.fs.writeFile(lockPath, writeWorkIndex(index, this.#codec));
        await this.fs.rename(lockPath, indexPath);
        held = false;
      });
    } finally {
      if (held) await this.#store.remove(lockPath);
    }
  }

  /** The blob id git would record for a working-tree file already stat'ed; null for what git does not record. */
  async worktreeOid(full: string, st: StorageStat): Promise<string | null> {
    if (st.isSymbolicLink()) return this.fs.readlink ? this.blobOid(utf8(await this.fs.readlink(full))) : null;
    if (!st.isFile()) return null;
    const data = await this.#store.read(full);
    return data === null ? null : this.blobOid(data);
  }

  /** A working-tree path's content as git would record it (`indexMode` keeps the mode when `core.filemode` is off). */
  async capture(root: string, path: string, fileMode: boolean, indexMode: number | undefined): Promise<Captured> {
    const full = joinPath(root, path);
    const st = await this.#store.lstat(full);
    if (st === null || !(st.isFile() || st.isSymbolicLink()))
      return { state: { path, oid: null, mode: null }, st: null, data: null };
    if (st.isSymbolicLink() && !this.fs.readlink) {
      // Recording it as absent would commit its removal.
      throw new EntityGitError(
        'PROJECT_GIT_ERROR',
        `[${OBJECT_ENGINE}] ${full} is a symbolic link and this file system cannot read links`,
        { path: full },
      );
    }
    const data = st.isSymbolicLink() ? utf8(await this.fs.readlink!(full)) : await this.#store.read(full);
    if (data === null) return { state: { path, oid: null, mode: null }, st: null, data: null };
    return { state: { path, oid: this.blobOid(data), mode: modeOf(st, fileMode, indexMode).toString(8) }, st, data };
  }

  /** Write a blob of `objects` at `root/path` (a link for mode 120000), replacing a file or an empty directory there. */
  async writeWorkFile(objects: ObjectStore, root: string, e: FileState): Promise<void> {
    const full = joinPath(root, e.path);
    const data = await objects.readTyped(e.oid!, 'blob');
    const st = await this.#store.lstat(full);
    if (st?.isDirectory()) await this.#store.removeEmptyDir(full);
    else if (st !== null) await this.#store.remove(full);
    await this.#store.mkdirp(dirname(full));
    if (e.mode === '120000') await this.fs.symlink!(fromUtf8(data), full);
    else await this.fs.writeFile(full, data, { mode: e.mode === '100755' ? 0o755 : 0o644 });
  }

  /** Remove the file at `path` and the directories that leaves empty, up to `root`. */
  async removeWorkFile(root: string, path: string): Promise<void> {
    await this.#store.remove(joinPath(root, path));
    for (let dir = dirname(path); dir !== '' && dir !== '.' && dir !== '/'; dir = dirname(dir))
      if (!(await this.#store.removeEmptyDir(joinPath(root, dir)))) break;
  }
}
