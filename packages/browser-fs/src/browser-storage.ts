import { EntityGitError } from '@entity-git/core';
import {
  isQuotaError,
  LOCK_DEFAULTS,
  type LockOptions,
  lockOptions,
  type Storage,
  type StorageFs,
  type StorageStat,
} from '@entity-git/git';
import { browserError, fsError, PREFIX } from './errors.js';
import { FileMemory } from './file-memory.js';
import { patchBackend } from './lightning-backend.js';
import { newLightningFS, type LightningFS, type LightningPromises } from './lightning-fs.js';
import { exact, lightningStorageFs, utf8 } from './lightning-storage-fs.js';
import { lockName, locks, MIN_OWNER, ownerTag } from './web-locks.js';

export const DRIVER_NAME = 'browser-fs';

/** The LightningFS file system session repositories live in unless told otherwise. */
export const DEFAULT_FS_NAME = 'entity-git';

export interface BrowserStorageOptions {
  /**
   * The LightningFS file system: it lives in the IndexedDB database `<fsName>.lightning-fs`
   * ({@link fsDatabaseName}), and names every Web Lock this storage takes. Tabs that use the same
   * name share the repositories. Default {@link DEFAULT_FS_NAME}.
   */
  fsName?: string;
  /**
   * The sync lock, a Web Lock per session repository: how long a sync waits for another tab (or
   * another storage of this page) to finish with the same session (`timeoutMs`); then
   * `LOCK_TIMEOUT`. `0` does not wait, `Infinity` waits for good. Default `LOCK_DEFAULTS.sync`
   * (60 s). There is no `staleMs`: the browser lets go of a Web Lock when its tab goes.
   */
  syncLock?: Partial<Pick<LockOptions, 'timeoutMs'>>;
}

/** {@link browserStorage}'s result: a core {@link Storage}, plus what a page needs around it. */
export interface BrowserStorage extends Storage {
  readonly name: typeof DRIVER_NAME;
  /** The options in force, defaults filled in (frozen): the sync lock's wait as `syncLockTimeoutMs`. */
  readonly options: Readonly<{ fsName: string; syncLockTimeoutMs: number }>;
  readonly fs: StorageFs;
  readonly workTree: false;
  /**
   * The LightningFS instance under {@link BrowserStorage.fs}, for the page's own isomorphic-git
   * calls (`git.log({ fs: storage.lightningFs, dir })`). It sees what a sync wrote once the sync
   * has resolved (the sync's bytes are written back when it lets go of its lock; `flush()` does it
   * at any time). Writes through it bypass the storage's locks and its memory of files.
   */
  readonly lightningFs: LightningFS;
  createExclusive(path: string, data: Uint8Array | string): Promise<boolean>;
  flush(): Promise<void>;
  withLock<T>(key: string, fn: () => Promise<T>): Promise<T>;
  /**
   * Save the directory tree and give up this storage's owner lock (its lock files may then be
   * taken over). Call it once its syncs have settled; the storage must not be used afterwards.
   * Idempotent.
   */
  close(): Promise<void>;
}

/**
 * The IndexedDB database a file system lives in. Not the bare `fsName` (LightningFS's own
 * default), so that a DAG database given the same name as the file system cannot collide with
 * it: each would find the other's database without its own object stores.
 */
export function fsDatabaseName(fsName: string): string {
  return `${fsName}.lightning-fs`;
}

/** The options in force (`storage.options`): defaults filled in and checked (`INVALID_OPTION`). */
function frozenOptions(options: BrowserStorageOptions): BrowserStorage['options'] {
  const { timeoutMs } = lockOptions(
    LOCK_DEFAULTS.sync,
    { timeoutMs: options.syncLock?.timeoutMs },
    `${PREFIX} syncLock`,
  );
  const opts = Object.freeze({ fsName: options.fsName ?? DEFAULT_FS_NAME, syncLockTimeoutMs: timeoutMs });
  if (typeof opts.fsName !== 'string' || opts.fsName === '')
    throw new EntityGitError('INVALID_OPTION', `${PREFIX} fsName must be a non-empty string`);
  return opts;
}

/**
 * The browser storage: LightningFS on IndexedDB as the file system, Web Locks (`navigator.locks`)
 * between tabs, objects and refs only (no working tree).
 *
 * - LightningFS writes file data at once but saves its directory tree late (debounced, and on
 *   going idle), so after a reload the tree and the data can disagree. `flush()` saves the tree;
 *   core calls it before every ref move, and `withLock` calls it before a sync lets go of its
 *   session, so a sync that resolved survives a reload. A file whose data never reached
 *   IndexedDB reads as empty — the torn file core already repairs.
 * - LightningFS lets one tab at a time use a file system (its own lock, released 500 ms after the
 *   last operation) and reloads the tree when a tab takes over, so tabs see each other's writes.
 * - A lock file left by a tab that is gone (reloaded or closed mid-sync) is taken over by
 *   `createExclusive`: each storage holds an owner Web Lock for its lifetime, and marks the lock
 *   files it creates with its owner tag (stored as the file's uid, in the same tree as the file).
 */
export function browserStorage(options: BrowserStorageOptions = {}): BrowserStorage {
  return Object.freeze(new LightningStorage(frozenOptions(options)));
}

const READ_ONLY = new Set(['read', 'readdir', 'stat', 'readlink']);

/**
 * The browser storage itself: its locks, LightningFS, its memory of files, and its counters. The
 * storage's own operations are fields, not prototype methods: callers spread a storage to give it
 * another codec (`new Store({ ...storage, codec })`), and a spread copies own fields only.
 */
class LightningStorage implements BrowserStorage {
  readonly name = DRIVER_NAME;
  readonly workTree = false;
  readonly options: BrowserStorage['options'];
  readonly fs: StorageFs;
  readonly lightningFs: LightningFS;
  readonly #manager = locks();
  /** This storage's owner tag, the uid of the lock files it creates. */
  readonly #owner = ownerTag();
  /** Resolves once the owner lock is held. */
  readonly #ownerHeld: Promise<void>;
  readonly #p: LightningPromises;
  /** LightningFS's init. */
  readonly #ready: Promise<void>;
  readonly #memory: FileMemory;
  readonly #parentIsDir: (path: string) => Promise<void>;
  /** Whether LightningFS was patched to hold file bytes back until the tree is saved. */
  #batching = false;
  #closed = false;
  /** Bumped by every operation that changes the tree: a lock that wrote nothing has nothing to save. */
  #changes = 0;
  /**
   * Changes still running, and how many changes the last save began after (all of them done): a
   * lock whose changes a save already holds (a sync's inner lock saved them) saves nothing more.
   */
  #running = 0;
  #saved = 0;
  /** Lets go of the owner lock, once it is held. */
  #releaseOwner: (() => void) | null = null;

  constructor(options: BrowserStorage['options']) {
    this.options = options;
    this.#ownerHeld = new Promise<void>((granted) => {
      void this.#manager.request(
        lockName(options.fsName, `owner:${this.#owner}`),
        () =>
          new Promise<void>((release) => {
            this.#releaseOwner = release;
            granted();
          }),
      );
    });
    this.lightningFs = newLightningFS();
    const p = this.lightningFs.promises;
    this.#p = p;
    // `defer`: do not take LightningFS's fs-wide lock until the first operation needs it. No
    // `wipe`: LightningFS wipes by stealing that lock from whichever tab holds it.
    const owner = this.#owner;
    this.#ready = p.init(options.fsName, {
      defer: true,
      uid: owner,
      gid: owner,
      fileDbName: fsDatabaseName(options.fsName),
    });
    const memory = new FileMemory(p, this.#ready, () => this.#batching);
    this.#memory = memory;
    // Before any operation: the first one awaits the same init, and going idle comes 500 ms later.
    // Once patched, file bytes are held back until the tree is saved, then written in one
    // IndexedDB transaction (see `deferWrite`); until then (or if LightningFS changed) at once.
    this.#ready.then(
      () => {
        this.#batching = patchBackend(p, { beforeSave: () => memory.writeBack(), afterLetGo: () => memory.letGo() });
      },
      () => undefined,
    );
    const { fs, parentIsDir } = lightningStorageFs(p, memory, (op, path, fn) => this.#run(op, path, fn));
    this.fs = fs;
    this.#parentIsDir = parentIsDir;
  }

  async #run<T>(op: string, path: string, fn: () => Promise<T>): Promise<T> {
    if (this.#closed) throw new EntityGitError('INVALID_OPTION', `${PREFIX} ${op} ${path}: the storage is closed`);
    const mutating = !READ_ONLY.has(op);
    if (mutating) {
      this.#changes++;
      this.#running++;
    }
    try {
      return await fn();
    } catch (err) {
      throw fsError(err, op, path);
    } finally {
      if (mutating) this.#running--;
    }
  }

  /** The owner tags whose tabs are alive (their owner lock is held), from the origin's lock table. */
  async #alive(): Promise<Set<string>> {
    const snapshot = await this.#manager.query();
    return new Set((snapshot.held ?? []).map((l) => l.name ?? ''));
  }

  readonly flush = async (): Promise<void> => {
    await this.#ready;
    const holds = this.#running === 0 ? this.#changes : this.#saved;
    try {
      await this.#p.flush();
      this.#saved = Math.max(this.#saved, holds);
    } catch (err) {
      throw isQuotaError(err)
        ? browserError(err, 'STORAGE_ERROR', 'saving the directory tree')
        : fsError(err, 'flush', '/');
    }
  };

  // Atomic against other tabs and storages: the check and the write run under one Web Lock.
  readonly createExclusive = async (path: string, data: Uint8Array | string): Promise<boolean> => {
    const p = this.#p;
    const memory = this.#memory;
    await this.#ownerHeld;
    return this.#manager.request(lockName(this.options.fsName, 'create-exclusive'), () =>
      this.#run('create', path, async () => {
        let existing: StorageStat | null = null;
        try {
          existing = await p.lstat(path);
        } catch (err) {
          if ((err as { code?: string }).code !== 'ENOENT') throw err;
        }
        if (existing !== null) {
          const tag = existing.uid ?? 0;
          const abandoned =
            path.endsWith('.lock') &&
            existing.isFile() &&
            tag !== this.#owner &&
            tag >= MIN_OWNER &&
            !(await this.#alive()).has(lockName(this.options.fsName, `owner:${tag}`));
          if (!abandoned) return false;
          memory.forget(path);
          memory.dropPending(existing.ino);
          await p.unlink(path);
        }
        await this.#parentIsDir(path);
        const bytes = typeof data === 'string' ? utf8(data) : (exact(data) as Uint8Array);
        await memory.writeKnown(path, bytes === data ? bytes.slice() : bytes, bytes);
        return true;
      }),
    );
  };

  // Reflogs and the mirror's state log grow by a line a turn; LightningFS has no append. The
  // bytes known from the last read or write are extended, not read and decoded again.
  readonly appendFile = (path: string, data: Uint8Array | string): Promise<void> => {
    const p = this.#p;
    const memory = this.#memory;
    return this.#run('append', path, async () => {
      const add = typeof data === 'string' ? utf8(data) : data;
      const st = await p.lstat(path).catch(() => null);
      let old: Uint8Array = new Uint8Array(0);
      if (st !== null)
        old = memory.bytesAt(path, st) ?? ((await p.readFile(path)) as Uint8Array | null | undefined) ?? old;
      const next = new Uint8Array(old.byteLength + add.byteLength);
      next.set(old, 0);
      next.set(add, old.byteLength);
      await this.#parentIsDir(path);
      await memory.writeKnown(path, next, next);
    });
  };

  // The bytes held back are written now, so a ref never moves when its objects do not fit
  // (QUOTA_EXCEEDED before the move, as without batching). The tree is not saved here: it is saved
  // whole, refs and objects alike, and always after the bytes it names, so a reload finds a ref's
  // old value or its new one with every object it names; the sync's lock saves it when it lets go
  // (`withLock`). Without batching (LightningFS not as expected) the tree is saved now.
  readonly beforeRefMove = async (): Promise<void> => {
    await this.#ready;
    if (!this.#batching) {
      await this.flush();
      return;
    }
    try {
      await this.#memory.writeBack();
    } catch (err) {
      throw isQuotaError(err) ? browserError(err, 'STORAGE_ERROR', 'writing objects') : fsError(err, 'write', '/');
    }
  };

  readonly withLock = async <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    let granted = false;
    const wait = this.options.syncLockTimeoutMs;
    // 0: do not wait at all; Infinity: wait as long as it takes.
    const signal = wait > 0 && wait !== Infinity ? AbortSignal.timeout(wait) : undefined;
    const timeout = (cause?: unknown) =>
      new EntityGitError(
        'LOCK_TIMEOUT',
        `${PREFIX} ${key} stayed locked by another tab for ${wait} ms`,
        { lock: key },
        { cause },
      );
    try {
      return await this.#manager.request(
        lockName(this.options.fsName, key),
        wait === 0 ? { ifAvailable: true } : signal ? { signal } : {},
        async (lock) => {
          if (lock === null) throw timeout();
          granted = true;
          return this.#holding(fn);
        },
      );
    } catch (err) {
      if (!granted && signal?.aborted) throw timeout(err);
      throw err;
    }
  };

  /** Runs `fn` under a held lock, then saves what it changed (also when it failed). */
  async #holding<T>(fn: () => Promise<T>): Promise<T> {
    const before = this.#changes;
    let result: T;
    try {
      result = await fn();
    } catch (err) {
      if (this.#changes !== before && this.#changes !== this.#saved) await this.flush().catch(() => undefined);
      throw err;
    }
    // What the sync wrote survives a reload once it has resolved. A read-only holder (verify)
    // saves nothing, so it keeps working on an origin whose quota is used up; nor does a
    // holder whose changes are saved already (a sync holds the lock's old name inside the
    // new one, and would otherwise save the tree, every file of the origin, twice a sync).
    if (this.#changes !== before && this.#changes !== this.#saved) await this.flush();
    return result;
  }

  readonly close = async (): Promise<void> => {
    if (this.#closed) return;
    await this.flush().catch(() => undefined);
    this.#closed = true;
    await this.#ownerHeld;
    this.#releaseOwner?.();
  };
}
