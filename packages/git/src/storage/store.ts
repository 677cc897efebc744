import { fromUtf8, utf8 } from '../bytes/utf8.js';
import { portableCodec, type Codec } from '../codec/codec.js';
import { EntityGitError, fsErrorCode, normaliseError } from '../errors.js';
import { KeyedMutex } from './mutex.js';
import { dirname, uniqueSuffix } from './paths.js';
import type { Storage, StorageFs, StorageStat, WorkTreeFile } from './storage.js';

/**
 * A {@link Storage} with every optional member filled in — the one object the git layer uses.
 * Guards the lifecycle the adapter leaves out (STYLE.md §4): an in-process mutex per lock key
 * around the adapter's cross-process lock; temp-then-rename writes; parents created on demand.
 */
export class Store {
  readonly name: string;
  readonly fs: StorageFs;
  readonly codec: Codec;
  readonly workTree: boolean;
  private readonly storage: Storage;
  private readonly mutex = new KeyedMutex();

  constructor(storage: Storage) {
    this.storage = storage;
    this.name = storage.name;
    this.fs = storage.fs;
    this.codec = storage.codec ?? portableCodec;
    this.workTree = storage.workTree ?? false;
  }

  /** The file's bytes, or null when it does not exist. */
  async read(path: string): Promise<Uint8Array | null> {
    try {
      const data = await this.fs.readFile(path);
      return typeof data === 'string' ? utf8(data) : data;
    } catch (err) {
      if (fsErrorCode(err) === 'ENOENT' || fsErrorCode(err) === 'ENOTDIR') return null;
      throw this.wrap(err, 'read', path);
    }
  }

  /** Whether {@link readRange} reads part of a file (else a caller reads the whole). */
  get readsRanges(): boolean {
    return this.storage.readRange !== undefined;
  }

  /** Bytes `start` to `end` of the file (fewer at its end), or null when it does not exist. */
  async readRange(path: string, start: number, end: number): Promise<Uint8Array | null> {
    if (this.storage.readRange === undefined) return (await this.read(path))?.subarray(start, end) ?? null;
    try {
      return await this.storage.readRange(path, start, end);
    } catch (err) {
      if (fsErrorCode(err) === 'ENOENT' || fsErrorCode(err) === 'ENOTDIR') return null;
      throw this.wrap(err, 'read', path);
    }
  }

  /** Bytes of the file from `start` into `target` (see {@link Storage.readRangeInto}); null when it does not exist. */
  async readRangeInto(path: string, start: number, target: Uint8Array): Promise<number | null> {
    if (this.storage.readRangeInto === undefined) {
      const bytes = await this.readRange(path, start, start + target.length);
      if (bytes === null) return null;
      target.set(bytes);
      return bytes.length;
    }
    try {
      return await this.storage.readRangeInto(path, start, target);
    } catch (err) {
      if (fsErrorCode(err) === 'ENOENT' || fsErrorCode(err) === 'ENOTDIR') return null;
      throw this.wrap(err, 'read', path);
    }
  }

  async readText(path: string): Promise<string | null> {
    const b = await this.read(path);
    return b === null ? null : fromUtf8(b);
  }

  async lstat(path: string): Promise<StorageStat | null> {
    try {
      return await this.fs.lstat(path);
    } catch (err) {
      if (fsErrorCode(err) === 'ENOENT' || fsErrorCode(err) === 'ENOTDIR') return null;
      throw this.wrap(err, 'stat', path);
    }
  }

  async mkdirp(dir: string): Promise<void> {
    try {
      await this.fs.mkdir(dir);
      return;
    } catch (err) {
      const code = fsErrorCode(err);
      if (code === 'EEXIST') return;
      if (code !== 'ENOENT') throw this.wrap(err, 'mkdir', dir);
    }
    await this.mkdirp(dirname(dir));
    try {
      await this.fs.mkdir(dir);
    } catch (err) {
      if (fsErrorCode(err) !== 'EEXIST') throw this.wrap(err, 'mkdir', dir);
    }
  }

  /** Write `data` at `path` through a temp file and a rename, so readers never see half a file. */
  async writeAtomic(path: string, data: Uint8Array | string, tmp = `${path}.tmp-${uniqueSuffix()}`): Promise<void> {
    try {
      await this.writeCreatingParent(tmp, data);
      await this.fs.rename(tmp, path);
    } catch (err) {
      await this.remove(tmp);
      throw this.wrap(err, 'write', path);
    }
  }

  /** Write `data` at `path` in place (working-tree files, whose readers are people). */
  async writeCreatingParent(path: string, data: Uint8Array | string): Promise<void> {
    // The parent may vanish again between its mkdir and the write: `git prune-packed` (run by
    // git repack and gc) removes object directories it empties. A few rounds, as git does.
    for (let attempt = 0; ; attempt++) {
      try {
        await this.fs.writeFile(path, data);
        return;
      } catch (err) {
        if (fsErrorCode(err) !== 'ENOENT' || attempt >= 4) {
          // A write the disk had no room for may leave part of the file behind, which would keep
          // the disk full for every other session on it: it goes (the next sync writes it whole).
          const code = fsErrorCode(err);
          if (code === 'ENOSPC' || code === 'EDQUOT') await this.remove(path).catch(() => undefined);
          throw this.wrap(err, 'write', path);
        }
        await this.mkdirp(dirname(path));
      }
    }
  }

  /**
   * Write working-tree files in place, creating parents, and return each one's `lstat` after its
   * write ({@link Storage.writeFiles}, run beside the caller where the adapter can).
   */
  async writeFiles(files: readonly WorkTreeFile[]): Promise<StorageStat[]> {
    if (this.storage.writeFiles !== undefined) {
      try {
        return await this.storage.writeFiles(files);
      } catch (err) {
        const path = (err as { path?: unknown })?.path;
        throw this.wrap(err, 'write', typeof path === 'string' ? path : (files[0]?.path ?? ''));
      }
    }
    const out: StorageStat[] = [];
    for (const f of files) {
      await this.writeCreatingParent(f.path, f.data);
      const st = await this.lstat(f.path);
      if (st === null)
        throw new EntityGitError('STORAGE_ERROR', `[${this.name}] ${f.path} is gone right after its write`, {
          op: 'write',
          path: f.path,
        });
      out.push(st);
    }
    return out;
  }

  /** Create `path` with `data` unless it exists; false when it exists. */
  async createExclusive(path: string, data: Uint8Array | string): Promise<boolean> {
    const create = async (): Promise<boolean> => {
      if (this.storage.createExclusive) return this.storage.createExclusive(path, data);
      if (await this.lstat(path)) return false;
      await this.fs.writeFile(path, data);
      return true;
    };
    try {
      return await create();
    } catch (err) {
      if (fsErrorCode(err) !== 'ENOENT') throw this.wrap(err, 'create', path);
      await this.mkdirp(dirname(path));
      try {
        return await create();
      } catch (again) {
        throw this.wrap(again, 'create', path);
      }
    }
  }

  async append(path: string, data: string): Promise<void> {
    try {
      if (this.storage.appendFile) {
        await this.storage.appendFile(path, data);
        return;
      }
      const old = (await this.readText(path)) ?? '';
      await this.fs.writeFile(path, old + data);
    } catch (err) {
      if (fsErrorCode(err) !== 'ENOENT') throw this.wrap(err, 'append', path);
      await this.mkdirp(dirname(path));
      await this.append(path, data);
    }
  }

  /** Remove a file; a missing file is not an error (false: there was none). */
  async remove(path: string): Promise<boolean> {
    try {
      await this.fs.unlink(path);
      return true;
    } catch (err) {
      const code = fsErrorCode(err);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw this.wrap(err, 'unlink', path);
      return false;
    }
  }

  /**
   * Remove a directory if it is empty (true: removed). A directory that is not empty, or gone,
   * stays as it is: it is how `git prune-packed` leaves the object directories it empties, and a
   * writer that finds its directory gone makes it again ({@link writeCreatingParent}).
   */
  async removeEmptyDir(dir: string): Promise<boolean> {
    try {
      await this.fs.rmdir(dir);
      return true;
    } catch (err) {
      const code = fsErrorCode(err);
      if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOENT' || code === 'ENOTDIR') return false;
      throw this.wrap(err, 'rmdir', dir);
    }
  }

  async readdir(dir: string): Promise<string[]> {
    try {
      return await this.fs.readdir(dir);
    } catch (err) {
      const code = fsErrorCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return [];
      throw this.wrap(err, 'readdir', dir);
    }
  }

  async flush(): Promise<void> {
    if (this.storage.flush) await this.storage.flush();
  }

  /** Before a ref moves: what the storage needs so the objects land before the ref does. */
  async beforeRefMove(): Promise<void> {
    if (this.storage.beforeRefMove) await this.storage.beforeRefMove();
    else await this.flush();
  }

  /** Run `fn` alone for `key`: first among this process's callers, then against other processes. */
  async lock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.mutex.run(key, () => (this.storage.withLock ? this.storage.withLock(key, fn) : fn()));
  }

  /** An fs error as a typed error (`STORAGE_ERROR`, `QUOTA_EXCEEDED`); typed errors pass through. */
  wrap(err: unknown, op: string, path: string): Error {
    return normaliseError(err, {
      code: 'STORAGE_ERROR',
      prefix: `[${this.name}]`,
      what: `${op} ${path}`,
      data: { op, path },
      codeKey: 'fsCode',
    });
  }
}

// One Store per storage object, so callers in this process share its in-process mutexes.
const stores = new WeakMap<Storage, Store>();
/** The one {@link Store} of `storage` in this process (made on first use): its callers share its locks. */
export function storeFor(storage: Storage): Store {
  let store = stores.get(storage);
  if (!store) {
    store = new Store(storage);
    stores.set(storage, store);
  }
  return store;
}
