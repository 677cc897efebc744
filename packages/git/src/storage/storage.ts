import type { Codec } from '../codec/codec.js';

/** What `stat`/`lstat` return: the fields of Node's `fs.Stats` that git and the index need. */
export interface StorageStat {
  mode: number;
  size: number;
  ino: number;
  mtimeMs: number;
  ctimeMs?: number;
  dev?: number;
  uid?: number;
  gid?: number;
  /** Nanosecond times where the platform has them (written into git's index for exact matches). */
  mtimeNs?: bigint;
  ctimeNs?: bigint;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

/** A file {@link Storage.writeFiles} writes: an absolute path and its bytes. */
export interface WorkTreeFile {
  path: string;
  data: Uint8Array;
}

/**
 * The promise-based file system subset core and isomorphic-git use — Node's `fs/promises` and
 * LightningFS's `promises` both fit. Paths are absolute, `/`-separated. Errors carry Node's
 * `code` (`ENOENT`, `EEXIST`, `ENOTDIR`, `ENOTEMPTY`).
 */
export interface StorageFs {
  readFile(path: string, options?: { encoding?: 'utf8' } | 'utf8'): Promise<Uint8Array | string>;
  writeFile(path: string, data: Uint8Array | string, options?: { mode?: number } | 'utf8'): Promise<void>;
  unlink(path: string): Promise<void>;
  readdir(path: string): Promise<string[]>;
  mkdir(path: string, options?: { mode?: number }): Promise<void>;
  rmdir(path: string): Promise<void>;
  stat(path: string): Promise<StorageStat>;
  lstat(path: string): Promise<StorageStat>;
  rename(from: string, to: string): Promise<void>;
  readlink?(path: string): Promise<string>;
  symlink?(target: string, path: string): Promise<void>;
}

/**
 * A storage adapter: the only thing a platform supplies to run the mirror (the commit logic is
 * core's). Everything but `name` and `fs` is optional; core fills in the rest.
 */
export interface Storage {
  /** A constant naming the adapter, for messages (`node-fs`, `browser-fs`). */
  readonly name: string;
  readonly fs: StorageFs;
  /**
   * Whether session repositories keep a checked-out working tree and index, so `git status` is
   * clean and a user can `cd` in. Default `false` (objects and refs only, as in the browser).
   */
  readonly workTree?: boolean;
  /**
   * Create `path` holding `data` only if nothing is there; resolve `false` if it exists. Must be
   * atomic against other processes (Node: `open(…, 'wx')`). Default: `lstat` then `writeFile`,
   * which is only safe under {@link Storage.withLock}.
   */
  createExclusive?(path: string, data: Uint8Array | string): Promise<boolean>;
  /**
   * Bytes `start` to `end` of a file (fewer at its end), or null when it does not exist: a pack
   * is read by the parts a read needs. Default: none, and packs are read whole.
   */
  readRange?(path: string, start: number, end: number): Promise<Uint8Array | null>;
  /**
   * Bytes of a file from `start` into `target` (as many as it holds, fewer at the file's end);
   * resolves with the count read, or null when the file does not exist. Lets a reader stream a
   * pack through one buffer of its own instead of a fresh one per read. Default: {@link readRange}
   * and a copy.
   */
  readRangeInto?(path: string, start: number, target: Uint8Array): Promise<number | null>;
  /**
   * Write many working-tree files in place, creating their parent directories, and resolve with
   * each file's `lstat` after its write, in order. Runs beside the caller's own work where the
   * platform can (node-fs: a worker thread, so a backfill's thousands of file creations overlap
   * its object writing). A failure rejects with the first failing file's error (its `code`), the
   * files before it written. Default: one `writeFile` and `lstat` after another.
   */
  writeFiles?(files: readonly WorkTreeFile[]): Promise<StorageStat[]>;
  /** Append to a file, creating it (reflogs). Default: read, concatenate, write. */
  appendFile?(path: string, data: Uint8Array | string): Promise<void>;
  /**
   * Make every write so far durable before a ref moves (LightningFS `flush()`; fsync on Node when
   * asked for). Default: nothing to do.
   */
  flush?(): Promise<void>;
  /**
   * Called just before a ref moves: every write so far must be on disk before the ref's move can
   * be. Default: {@link Storage.flush}. An adapter whose saved state is only ever a whole
   * snapshot that follows every write it names (browser-fs writes file bytes back before every
   * save of its directory tree, which holds the ref and the objects together) has nothing to do:
   * a crash keeps either the ref's old value or its new one with the objects it names.
   */
  beforeRefMove?(): Promise<void>;
  /**
   * Run `fn` holding the lock named `key` against other processes or tabs. `key` is an absolute
   * path inside the repository the lock guards (its parent may not exist yet): adapters with
   * files may lock that file, others use it as a name. Core always adds an in-process mutex
   * around it. Default: the in-process mutex alone.
   */
  withLock?<T>(key: string, fn: () => Promise<T>): Promise<T>;
  /** Faster hashing and compression than the portable pure-JS codec. */
  codec?: Codec;
}
