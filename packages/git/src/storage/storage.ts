import type { Codec } from '../codec/codec.js';

/** What `stat`/`lstat` return: the fields of Node's `fs.Stats` that git and the index need. */
export interface StorageStat {
  /** File type and permission bits, as `st_mode` (0o100644 a file, 0o100755 executable, 0o120000 a symlink). */
  mode: number;
  /** Size in bytes. */
  size: number;
  /** Inode number (0 where the platform has none; git's index then matches on the other fields). */
  ino: number;
  /** Modification time in milliseconds since the epoch. */
  mtimeMs: number;
  /** Status-change time in milliseconds; default: `mtimeMs`. */
  ctimeMs?: number;
  /** Device number; default 0. */
  dev?: number;
  /** Owner's user id; default 0. */
  uid?: number;
  /** Owner's group id; default 0. */
  gid?: number;
  /** Nanosecond times where the platform has them (written into git's index for exact matches). */
  mtimeNs?: bigint;
  /** Nanosecond status-change time where the platform has it; default: from `ctimeMs`. */
  ctimeNs?: bigint;
  /** A regular file. */
  isFile(): boolean;
  /** A directory. */
  isDirectory(): boolean;
  /** A symbolic link (only `lstat` reports one). */
  isSymbolicLink(): boolean;
}

/** A file {@link Storage.writeFiles} writes: an absolute path and its bytes. */
export interface WorkTreeFile {
  /** Absolute, `/`-separated path of the file. */
  path: string;
  /** Its whole content. */
  data: Uint8Array;
}

/**
 * The promise-based file system subset core and isomorphic-git use — Node's `fs/promises` and
 * LightningFS's `promises` both fit. Paths are absolute, `/`-separated. Errors carry Node's
 * `code` (`ENOENT`, `EEXIST`, `ENOTDIR`, `ENOTEMPTY`).
 */
export interface StorageFs {
  /** A file's bytes (a string with `utf8`); `ENOENT` when it does not exist. */
  readFile(path: string, options?: { encoding?: 'utf8' } | 'utf8'): Promise<Uint8Array | string>;
  /** Create or replace a file (not atomically: core writes a temporary file and renames it). */
  writeFile(path: string, data: Uint8Array | string, options?: { mode?: number } | 'utf8'): Promise<void>;
  /** Remove a file; `ENOENT` when it does not exist. */
  unlink(path: string): Promise<void>;
  /** The names in a directory, in no particular order; `ENOENT` / `ENOTDIR`. */
  readdir(path: string): Promise<string[]>;
  /** Create one directory (its parent must exist); `EEXIST` when it does. */
  mkdir(path: string, options?: { mode?: number }): Promise<void>;
  /** Remove an empty directory; `ENOTEMPTY` otherwise. */
  rmdir(path: string): Promise<void>;
  /** A path's stat, following symbolic links. */
  stat(path: string): Promise<StorageStat>;
  /** A path's own stat (a symbolic link is reported as one). */
  lstat(path: string): Promise<StorageStat>;
  /** Move a file over another atomically (what makes every write of core all-or-nothing). */
  rename(from: string, to: string): Promise<void>;
  /**
   * A symbolic link's target. Optional: without it the project's object engine cannot read a link
   * in the user's working tree and refuses to commit that path (rather than record its removal).
   */
  readlink?(path: string): Promise<string>;
  /** Create a symbolic link. Optional; entity-git itself never calls it (isomorphic-git may). */
  symlink?(target: string, path: string): Promise<void>;
}

/**
 * A storage adapter: the only thing a platform supplies to run the mirror (the commit logic is
 * core's). Everything but `name` and `fs` is optional; core fills in the rest.
 */
export interface Storage {
  /** A constant naming the adapter, for messages (`node-fs`, `browser-fs`). */
  readonly name: string;
  /** The file system every read and write goes through. */
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
