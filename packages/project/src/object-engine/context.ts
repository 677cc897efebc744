import {
  EntityGitError,
  portableCodec,
  type Codec,
  ObjectStore,
  type Storage,
  type StorageFs,
  Store,
} from '@entity-git/git';

/**
 * The engine's name, as results and messages show it: `isomorphic-git`, the name users' results,
 * logs and stored records already carry, kept so that they keep matching.
 */
export const OBJECT_ENGINE = 'isomorphic-git';

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

/** A path and its blob in a tree (mode as the tree writes it). */
export interface Flat {
  mode: string;
  oid: string;
}

/** What every part of the object engine shares: the storage, the codec, the lock timeouts and a few readers. */
export interface EngineContext {
  readonly store: Store;
  readonly fs: StorageFs;
  readonly codec: Codec;
  readonly lockTimeoutMs: number;
  /** Ref store options for the user's repository: a lock file there is never taken over. */
  readonly USER_REF_OPTIONS: { lockTimeoutMs: number; staleLockMs: number };
  /** Throw `err` as a `PROJECT_GIT_ERROR` naming `what` (an `EntityGitError` as it is). */
  fail(what: string, err: unknown, data?: Record<string, unknown>): never;
  readText(p: string): Promise<string | null>;
  /** A file's text; null when absent or not a file. */
  readFileText(p: string): Promise<string | null>;
  isDir(p: string): Promise<boolean>;
  blobOid(content: Uint8Array): string;
}

export function engineContext(options: ObjectEngineOptions): EngineContext {
  const storage: Storage = options.storage ?? { name: OBJECT_ENGINE, fs: options.fs! };
  if (!storage.fs) throw new EntityGitError('INVALID_OPTION', 'createIsoGitEngine needs a storage or an fs');
  const codec = options.codec ?? storage.codec ?? portableCodec;
  const store = new Store({ ...storage, codec });
  const lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
  const fs = store.fs;
  // A lock file in the user's repository is git's to judge: never taken over however old (git tells the user to remove it).
  const USER_REF_OPTIONS = { lockTimeoutMs, staleLockMs: Number.POSITIVE_INFINITY };

  const fail = (what: string, err: unknown, data: Record<string, unknown> = {}): never => {
    if (err instanceof EntityGitError) throw err;
    throw new EntityGitError(
      'PROJECT_GIT_ERROR',
      `[${OBJECT_ENGINE}] ${what}: ${(err as Error)?.message ?? String(err)}`,
      data,
      { cause: err },
    );
  };
  const readText = (p: string) => store.readText(p);
  /** A file's text; null when absent or not a file (a `.gitignore` that is a directory counts for nothing, as in git). */
  const readFileText = async (p: string) => ((await store.lstat(p))?.isFile() ? store.readText(p) : null);
  const isDir = async (p: string) => (await store.lstat(p))?.isDirectory() === true;
  const blobOid = (content: Uint8Array) => new ObjectStore(store, '/').hash('blob', content);
  return { store, fs, codec, lockTimeoutMs, USER_REF_OPTIONS, fail, readText, readFileText, isDir, blobOid };
}
