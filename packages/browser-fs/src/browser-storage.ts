import { EntityGitError, type Storage, type StorageFs, type StorageStat } from '@entity-git/core';
import { ensureBuffer } from './buffer-polyfill.js';
import { codeError, fsError, PREFIX, quotaError, isQuotaError } from './errors.js';
import { newLightningFS, type LightningFS, type LightningPromises } from './lightning-fs.js';

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
   * How long a sync waits for another tab (or another storage of this page) to finish with the
   * same session; then `LOCK_TIMEOUT`. `0` does not wait, `Infinity` waits for good.
   * Default 60 000 ms.
   */
  syncLockTimeoutMs?: number;
}

/** {@link browserStorage}'s result: a core {@link Storage}, plus what a page needs around it. */
export interface BrowserStorage extends Storage {
  readonly name: typeof DRIVER_NAME;
  /** The options in force, defaults filled in (frozen). */
  readonly options: Readonly<{ fsName: string; syncLockTimeoutMs: number }>;
  readonly fs: StorageFs;
  readonly workTree: false;
  /**
   * The LightningFS instance under {@link BrowserStorage.fs}, for the page's own isomorphic-git
   * calls (`git.log({ fs: storage.lightningFs, dir })`). Writes through it bypass the
   * storage's locks.
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

// Lock files (`<ref>.lock`) carry their creator's owner tag as their uid. LightningFS's
// default uid is 1, so files made without this storage never look abandoned.
const MIN_OWNER = 2;
const MAX_OWNER = 0x7fffffff;

/** Files larger than this are not kept in memory after a read or write; nor more than the total. */
const KNOWN_FILE_MAX = 1 << 20;
const KNOWN_TOTAL_MAX = 16 << 20;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const utf8 = (text: string) => encoder.encode(text);
const fromUtf8 = (bytes: Uint8Array) => decoder.decode(bytes);

const lockName = (fsName: string, what: string) => `entity-git:${fsName}:${what}`;

function ownerTag(): number {
  const [n] = crypto.getRandomValues(new Uint32Array(1));
  return MIN_OWNER + (n! % (MAX_OWNER - MIN_OWNER));
}

function locks(): LockManager {
  const manager = globalThis.navigator?.locks;
  if (!manager) throw new EntityGitError('INVALID_OPTION', `${PREFIX} the Web Locks API (navigator.locks) is missing: a secure context (https or localhost) is needed`);
  return manager;
}

function dirOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

/** Typed arrays that are views into a larger buffer would be stored whole by IndexedDB. */
function exact(data: Uint8Array | string): Uint8Array | string {
  if (typeof data === 'string') return data;
  return data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && data.constructor === Uint8Array ? data : new Uint8Array(data);
}

/**
 * LightningFS (4.10.3, pinned) saves its tree when it goes idle, then lets go of its fs-wide
 * lock. When that save fails — a full origin — its `deactivate` rejects before letting go, and
 * every later operation rethrows that rejection: the page is wedged and other tabs wait on the
 * lock until it closes (seen in the quota test). Going idle must always let go: the unsaved tail
 * of the tree is dropped, as a reload drops it, and the next operation loads the saved tree.
 */
function letGoWhenIdle(p: LightningPromises, onLetGo: () => void): void {
  const backend = (p as unknown as { _backend?: Record<string, unknown> })._backend;
  if (!backend || typeof backend.deactivate !== 'function' || backend.egLetsGo === true) return;
  const deactivate = (backend.deactivate as () => Promise<void>).bind(backend);
  const part = <K extends string>(name: K) => backend[name] as Record<string, (() => unknown) | undefined> | undefined;
  backend.deactivate = async () => {
    // Once it lets go, another tab may write: what this page remembers of files is stale.
    onLetGo();
    try {
      await deactivate();
    } catch {
      for (const step of [() => part('_cache')?.deactivate?.(), () => part('_mutex')?.release?.(), () => part('_idb')?.close?.()]) {
        try {
          await step();
        } catch {
          // letting go matters more than any one step of it
        }
      }
    }
  };
  backend.egLetsGo = true;
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
  const opts = Object.freeze({
    fsName: options.fsName ?? DEFAULT_FS_NAME,
    syncLockTimeoutMs: options.syncLockTimeoutMs ?? 60_000,
  });
  if (typeof opts.fsName !== 'string' || opts.fsName === '') throw new EntityGitError('INVALID_OPTION', `${PREFIX} fsName must be a non-empty string`);
  if (typeof opts.syncLockTimeoutMs !== 'number' || Number.isNaN(opts.syncLockTimeoutMs) || opts.syncLockTimeoutMs < 0) throw new EntityGitError('INVALID_OPTION', `${PREFIX} syncLockTimeoutMs must be a number of milliseconds`);
  ensureBuffer();
  const manager = locks();

  const owner = ownerTag();
  const ownerLock = lockName(opts.fsName, `owner:${owner}`);
  let releaseOwner: (() => void) | null = null;
  const ownerHeld = new Promise<void>((granted) => {
    void manager.request(ownerLock, () => new Promise<void>((release) => {
      releaseOwner = release;
      granted();
    }));
  });

  const lightningFs = newLightningFS();
  const p: LightningPromises = lightningFs.promises;
  // `defer`: do not take LightningFS's fs-wide lock until the first operation needs it. No
  // `wipe`: LightningFS wipes by stealing that lock from whichever tab holds it.
  const ready = p.init(opts.fsName, { defer: true, uid: owner, gid: owner, fileDbName: fsDatabaseName(opts.fsName) });
  // Before any operation: the first one awaits the same init, and going idle comes 500 ms later.
  ready.then(() => letGoWhenIdle(p, () => letGo()), () => undefined);
  let closed = false;

  // Bumped by every operation that changes the tree: a lock that wrote nothing has nothing to save.
  let changes = 0;
  const READ_ONLY = new Set(['read', 'readdir', 'stat', 'readlink']);

  async function run<T>(op: string, path: string, fn: () => Promise<T>): Promise<T> {
    if (closed) throw new EntityGitError('INVALID_OPTION', `${PREFIX} ${op} ${path}: the storage is closed`);
    if (!READ_ONLY.has(op)) changes++;
    try {
      return await fn();
    } catch (err) {
      throw fsError(err, op, path);
    }
  }

  // LightningFS would add a child to a *file* whose path is used as a directory; Node says ENOTDIR.
  async function parentIsDir(path: string): Promise<void> {
    const parent = dirOf(path);
    if (parent === '/') return;
    let st;
    try {
      st = await p.lstat(parent);
    } catch {
      return; // missing parent: LightningFS reports ENOENT itself
    }
    if (!st.isDirectory()) throw codeError('ENOTDIR', path);
  }

  // Small files this page read or wrote, with the stat they had then (LightningFS keeps every
  // stat in memory; reading a file's bytes is an IndexedDB round trip). A read whose file still
  // has that stat is answered from here: refs, HEAD, config, reflogs and the mirror's state log
  // are read again by every sync. Forgotten whenever LightningFS lets go of the file system
  // (another tab may write then) and on any write this page makes to the file.
  const known = new Map<string, { key: string; data: Uint8Array }>();
  let knownBytes = 0;
  const writing = new Map<string, number>();
  const statKey = (st: { ino?: number; size: number; mtimeMs: number }) => `${st.ino ?? ''}:${st.size}:${st.mtimeMs}`;
  const forget = (path: string) => {
    const e = known.get(path);
    if (e) {
      known.delete(path);
      knownBytes -= e.data.byteLength;
    }
  };
  const remember = (path: string, key: string, data: Uint8Array) => {
    forget(path);
    if (data.byteLength > KNOWN_FILE_MAX) return;
    known.set(path, { key, data });
    knownBytes += data.byteLength;
    for (const [k] of known) {
      if (knownBytes <= KNOWN_TOTAL_MAX) break;
      forget(k);
    }
  };
  const letGo = () => {
    known.clear();
    knownBytes = 0;
  };
  /** Write `bytes`; `kept` (the same bytes) is remembered when no other write to the file overlapped. */
  async function writeKnown(path: string, bytes: Uint8Array, kept: Uint8Array, o?: Parameters<StorageFs['writeFile']>[2]): Promise<void> {
    forget(path);
    writing.set(path, (writing.get(path) ?? 0) + 1);
    try {
      await p.writeFile(path, bytes, o);
      if (writing.get(path) === 1) remember(path, statKey(await p.lstat(path)), kept);
    } finally {
      const n = writing.get(path)! - 1;
      if (n === 0) writing.delete(path);
      else writing.set(path, n);
    }
  }
  const asText = (o: Parameters<StorageFs['readFile']>[1]) => o === 'utf8' || (typeof o === 'object' && o?.encoding === 'utf8');

  const fs: StorageFs = {
    readFile: (path, o) => run('read', path, async () => {
      const st = await p.lstat(path).catch(() => null);
      const hit = st !== null && st.isFile() ? known.get(path) : undefined;
      if (hit !== undefined && hit.key === statKey(st!)) {
        // Most recently used last.
        known.delete(path);
        known.set(path, hit);
        return asText(o) ? fromUtf8(hit.data) : hit.data.slice();
      }
      const data = (await p.readFile(path)) as Uint8Array | null | undefined;
      if (data === undefined || data === null) {
        // The tree lists the file but its data never reached IndexedDB (reload in between).
        forget(path);
        return asText(o) ? '' : new Uint8Array(0);
      }
      if (st !== null && st.isFile() && !writing.has(path) && data.byteLength === st.size) remember(path, statKey(st), data.slice());
      return asText(o) ? fromUtf8(data) : data;
    }),
    writeFile: (path, data, o) => run('write', path, async () => {
      await parentIsDir(path);
      const bytes = typeof data === 'string' ? utf8(data) : (exact(data) as Uint8Array);
      // A copy is remembered: the caller may reuse its buffer.
      await writeKnown(path, bytes, bytes === data ? bytes.slice() : bytes, o);
    }),
    unlink: (path) => run('unlink', path, async () => {
      forget(path);
      const st = await p.lstat(path);
      if (st.isDirectory()) throw codeError('EISDIR', path);
      await p.unlink(path);
    }),
    readdir: (path) => run('readdir', path, () => p.readdir(path)),
    mkdir: (path, o) => run('mkdir', path, async () => {
      await parentIsDir(path);
      await p.mkdir(path, o);
    }),
    rmdir: (path) => run('rmdir', path, () => p.rmdir(path)),
    stat: (path) => run('stat', path, () => p.stat(path) as Promise<StorageStat>),
    lstat: (path) => run('stat', path, () => p.lstat(path) as Promise<StorageStat>),
    rename: (from, to) => run('rename', from, async () => {
      await parentIsDir(to);
      const moved = known.get(from);
      forget(from);
      forget(to);
      await p.rename(from, to);
      // LightningFS moves the file's entry, stat and all: what was known of it still holds.
      if (moved !== undefined && !writing.has(from) && !writing.has(to)) remember(to, moved.key, moved.data);
    }),
    readlink: (path) => run('readlink', path, () => p.readlink(path)),
    symlink: (target, path) => run('symlink', path, () => p.symlink(target, path)),
  };

  /** The owner tags whose tabs are alive (their owner lock is held), from the origin's lock table. */
  async function alive(): Promise<Set<string>> {
    const snapshot = await manager.query();
    return new Set((snapshot.held ?? []).map((l) => l.name ?? ''));
  }

  async function flush(): Promise<void> {
    await ready;
    try {
      await p.flush();
    } catch (err) {
      throw isQuotaError(err) ? quotaError(err, 'saving the directory tree') : fsError(err, 'flush', '/');
    }
  }

  const storage: BrowserStorage = {
    name: DRIVER_NAME,
    options: opts,
    fs,
    workTree: false,
    lightningFs,

    // Atomic against other tabs and storages: the check and the write run under one Web Lock.
    async createExclusive(path, data) {
      await ownerHeld;
      return manager.request(lockName(opts.fsName, 'create-exclusive'), () => run('create', path, async () => {
        let existing: StorageStat | null = null;
        try {
          existing = await p.lstat(path);
        } catch (err) {
          if ((err as { code?: string }).code !== 'ENOENT') throw err;
        }
        if (existing !== null) {
          const tag = existing.uid ?? 0;
          const abandoned = path.endsWith('.lock') && existing.isFile() && tag !== owner && tag >= MIN_OWNER
            && !(await alive()).has(lockName(opts.fsName, `owner:${tag}`));
          if (!abandoned) return false;
          forget(path);
          await p.unlink(path);
        }
        await parentIsDir(path);
        const bytes = typeof data === 'string' ? utf8(data) : exact(data) as Uint8Array;
        forget(path);
        await p.writeFile(path, bytes);
        if (!writing.has(path)) remember(path, statKey(await p.lstat(path)), bytes.slice());
        return true;
      }));
    },

    // Reflogs and the mirror's state log grow by a line a turn; LightningFS has no append. The
    // bytes known from the last read or write are extended, not read and decoded again.
    appendFile: (path, data) => run('append', path, async () => {
      const add = typeof data === 'string' ? utf8(data) : data;
      const st = await p.lstat(path).catch(() => null);
      let old: Uint8Array = new Uint8Array(0);
      if (st !== null) {
        const hit = known.get(path);
        if (hit !== undefined && hit.key === statKey(st)) old = hit.data;
        else old = ((await p.readFile(path)) as Uint8Array | null | undefined) ?? old;
      }
      const next = new Uint8Array(old.byteLength + add.byteLength);
      next.set(old, 0);
      next.set(add, old.byteLength);
      await parentIsDir(path);
      await writeKnown(path, next, next);
    }),

    flush,

    async withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
      let granted = false;
      const wait = opts.syncLockTimeoutMs;
      // 0: do not wait at all; Infinity: wait as long as it takes.
      const signal = wait > 0 && wait !== Infinity ? AbortSignal.timeout(wait) : undefined;
      const timeout = (cause?: unknown) => new EntityGitError('LOCK_TIMEOUT', `${PREFIX} ${key} stayed locked by another tab for ${wait} ms`, { lock: key }, { cause });
      try {
        return await manager.request(lockName(opts.fsName, key), wait === 0 ? { ifAvailable: true } : signal ? { signal } : {}, async (lock) => {
          if (lock === null) throw timeout();
          granted = true;
          const before = changes;
          let result: T;
          try {
            result = await fn();
          } catch (err) {
            if (changes !== before) await flush().catch(() => undefined);
            throw err;
          }
          // What the sync wrote survives a reload once it has resolved. A read-only holder (verify)
          // saves nothing, so it keeps working on an origin whose quota is used up.
          if (changes !== before) await flush();
          return result;
        });
      } catch (err) {
        if (!granted && signal?.aborted) throw timeout(err);
        throw err;
      }
    },

    async close() {
      if (closed) return;
      await flush().catch(() => undefined);
      closed = true;
      await ownerHeld;
      releaseOwner?.();
    },
  };
  return Object.freeze(storage);
}

/** What {@link requestPersistentStorage} found. */
export interface PersistenceReport {
  /** Whether the browser has `navigator.storage.persist`. */
  supported: boolean;
  /** Whether the origin's storage is now exempt from eviction under storage pressure. */
  persisted: boolean;
  /** Bytes used and available to the origin (`navigator.storage.estimate()`), null when unknown. */
  usage: number | null;
  quota: number | null;
}

/**
 * Ask the browser not to evict this origin's IndexedDB (the DAG and the repositories) under
 * storage pressure — `navigator.storage.persist()`. Browsers may prompt the user or decide by
 * engagement, so call it from a user gesture where you can; it never throws.
 */
export async function requestPersistentStorage(): Promise<PersistenceReport> {
  const s = globalThis.navigator?.storage;
  const report: PersistenceReport = { supported: typeof s?.persist === 'function', persisted: false, usage: null, quota: null };
  if (!s) return report;
  try {
    report.persisted = (await s.persisted?.()) === true || (report.supported && (await s.persist()) === true);
  } catch {
    report.persisted = false;
  }
  try {
    const estimate = await s.estimate?.();
    report.usage = estimate?.usage ?? null;
    report.quota = estimate?.quota ?? null;
  } catch {
    // an estimate is a courtesy
  }
  return report;
}
