import { EntityGitError, type Storage, type StorageFs, type StorageStat } from '@entity-git/core';
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

// Lock files (`<ref>.lock`) carry their creator's owner tag as their uid. LightningFS's
// default uid is 1, so files made without this storage never look abandoned.
const MIN_OWNER = 2;
const MAX_OWNER = 0x7fffffff;

/** Files larger than this are not kept in memory after a read or write; nor more than the total. */
const KNOWN_FILE_MAX = 1 << 20;
const KNOWN_TOTAL_MAX = 16 << 20;
/** File bytes held back for the next save of the tree before they are written anyway. */
const PENDING_MAX = 8 << 20;
/** The most bytes written back in one IndexedDB transaction (a larger file goes alone). */
const BATCH_BYTES = 1 << 20;

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
  if (!manager)
    throw new EntityGitError(
      'INVALID_OPTION',
      `${PREFIX} the Web Locks API (navigator.locks) is missing: a secure context (https or localhost) is needed`,
    );
  return manager;
}

function dirOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

/** Typed arrays that are views into a larger buffer would be stored whole by IndexedDB. */
function exact(data: Uint8Array | string): Uint8Array | string {
  if (typeof data === 'string') return data;
  return data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && data.constructor === Uint8Array
    ? data
    : new Uint8Array(data);
}

/** What this storage reaches inside LightningFS 4.10.3 (pinned) to batch its writes. */
interface LightningInternals {
  _wrap?: (
    fn: (...args: never[]) => Promise<unknown>,
    clean: (...args: unknown[]) => unknown[],
    mutating: boolean,
  ) => (...args: unknown[]) => Promise<unknown>;
  _backend?: Record<string, unknown> & {
    _saveSuperblock?: () => Promise<void>;
    _cache?: {
      writeStat(path: string, size: number, o: { mode?: number }): { ino: number };
      unlink(path: string): void;
      _root?: Map<unknown, unknown>;
    };
    _idb?: { _store?: { _withIDBStore(type: 'readwrite', fn: (store: IDBObjectStore) => void): Promise<void> } };
  };
}

/**
 * LightningFS (4.10.3, pinned) saves its tree when it goes idle, then lets go of its fs-wide
 * lock. When that save fails — a full origin — its `deactivate` rejects before letting go, and
 * every later operation rethrows that rejection: the page is wedged and other tabs wait on the
 * lock until it closes (seen in the quota test). Going idle must always let go: the unsaved tail
 * of the tree is dropped, as a reload drops it, and the next operation loads the saved tree.
 * `beforeSave` runs before every save of the tree (the storage writes the file bytes it holds
 * back first, so a saved tree never names bytes that are not in IndexedDB); `afterLetGo` once
 * it has let go (another tab may write from then on).
 */
function patchBackend(
  p: LightningPromises,
  hooks: { beforeSave: () => Promise<void>; afterLetGo: () => void },
): boolean {
  const backend = (p as unknown as LightningInternals)._backend;
  if (
    !backend ||
    typeof backend.deactivate !== 'function' ||
    typeof backend._saveSuperblock !== 'function' ||
    backend.egLetsGo === true
  )
    return false;
  const deactivate = (backend.deactivate as () => Promise<void>).bind(backend);
  const save = backend._saveSuperblock.bind(backend);
  const part = <K extends string>(name: K) => backend[name] as Record<string, (() => unknown) | undefined> | undefined;
  backend._saveSuperblock = async () => {
    await hooks.beforeSave();
    await save();
  };
  backend.deactivate = async () => {
    try {
      await deactivate();
    } catch {
      for (const step of [
        () => part('_cache')?.deactivate?.(),
        () => part('_mutex')?.release?.(),
        () => part('_idb')?.close?.(),
      ]) {
        try {
          await step();
        } catch {
          // letting go matters more than any one step of it
        }
      }
    } finally {
      hooks.afterLetGo();
    }
  };
  backend.egLetsGo = true;
  return true;
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
  if (typeof opts.fsName !== 'string' || opts.fsName === '')
    throw new EntityGitError('INVALID_OPTION', `${PREFIX} fsName must be a non-empty string`);
  if (typeof opts.syncLockTimeoutMs !== 'number' || Number.isNaN(opts.syncLockTimeoutMs) || opts.syncLockTimeoutMs < 0)
    throw new EntityGitError('INVALID_OPTION', `${PREFIX} syncLockTimeoutMs must be a number of milliseconds`);
  const manager = locks();

  const owner = ownerTag();
  const ownerLock = lockName(opts.fsName, `owner:${owner}`);
  let releaseOwner: (() => void) | null = null;
  const ownerHeld = new Promise<void>((granted) => {
    void manager.request(
      ownerLock,
      () =>
        new Promise<void>((release) => {
          releaseOwner = release;
          granted();
        }),
    );
  });

  const lightningFs = newLightningFS();
  const p: LightningPromises = lightningFs.promises;
  // `defer`: do not take LightningFS's fs-wide lock until the first operation needs it. No
  // `wipe`: LightningFS wipes by stealing that lock from whichever tab holds it.
  const ready = p.init(opts.fsName, { defer: true, uid: owner, gid: owner, fileDbName: fsDatabaseName(opts.fsName) });
  // Before any operation: the first one awaits the same init, and going idle comes 500 ms later.
  // Once patched, file bytes are held back until the tree is saved, then written in one
  // IndexedDB transaction (see `deferWrite`); until then (or if LightningFS changed) at once.
  let batching = false;
  ready.then(
    () => {
      batching = patchBackend(p, { beforeSave: () => writeBack(), afterLetGo: () => letGo() });
    },
    () => undefined,
  );
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
    } catch (err) {
      // A missing parent (or one above it): ENOENT, as LightningFS would say after trying.
      if ((err as { code?: string }).code === 'ENOENT') throw codeError('ENOENT', path);
      return;
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
  // File bytes written since the tree was last saved, by inode: LightningFS would put each file
  // in an IndexedDB transaction of its own (a round trip each, most of a turn's cost); they are
  // put together, in one, just before the tree is saved (`flush()`, going idle, or LightningFS's
  // own debounced save) — so the saved tree never names bytes IndexedDB lacks. Reads of such a
  // file are answered from here.
  const pending = new Map<number, Uint8Array>();
  /** Inodes made by a held-back write: IndexedDB has no bytes at all for them yet. */
  const fresh = new Set<number>();
  let pendingBytes = 0;
  const dropPending = (ino: number) => {
    const data = pending.get(ino);
    if (data !== undefined) {
      pending.delete(ino);
      fresh.delete(ino);
      pendingBytes -= data.byteLength;
    }
  };
  /** The path of the file with inode `ino` in LightningFS's tree, or null (a walk: failures only). */
  function pathOf(ino: number): string | null {
    const root = (p as unknown as LightningInternals)._backend?._cache?._root?.get('/') as
      | Map<unknown, unknown>
      | undefined;
    const walk = (dir: Map<unknown, unknown>, at: string): string | null => {
      for (const [name, entry] of dir) {
        if (name === 0 || !(entry instanceof Map)) continue;
        const full = `${at}/${name as string}`;
        const st = entry.get(0) as { ino?: number; type?: string } | undefined;
        if (st?.type === 'file' && st.ino === ino) return full;
        if (st?.type === 'dir') {
          const found = walk(entry, full);
          if (found !== null) return found;
        }
      }
      return null;
    };
    return root ? walk(root, '') : null;
  }
  async function writeBack(): Promise<void> {
    if (pending.size === 0) return;
    // Smallest first, in transactions of up to BATCH_BYTES (one file larger than that alone): a
    // turn's files go in one, and on a full origin a large file cannot take the small ones —
    // the repository's own — down with it.
    const batch = [...pending].sort((x, y) => x[1].byteLength - y[1].byteLength);
    const store = (p as unknown as LightningInternals)._backend!._idb!._store!;
    const put = (items: [number, Uint8Array][]) =>
      store._withIDBStore('readwrite', (os) => {
        for (const [ino, data] of items) os.put(data, ino);
      });
    // A file written again meanwhile keeps its newer bytes pending.
    const done = (ino: number, data: Uint8Array) => {
      if (pending.get(ino) === data) dropPending(ino);
    };
    let first: unknown = null;
    for (let i = 0; i < batch.length; ) {
      const group: [number, Uint8Array][] = [];
      let bytes = 0;
      do {
        group.push(batch[i]!);
        bytes += batch[i]![1].byteLength;
        i++;
      } while (i < batch.length && bytes + batch[i]![1].byteLength <= BATCH_BYTES);
      try {
        await put(group);
        for (const [ino, data] of group) done(ino, data);
        continue;
      } catch {
        // A transaction lands whole or not at all: file by file, what fits still lands, as
        // LightningFS's own writes would.
      }
      for (const [ino, data] of group) {
        const made = fresh.has(ino);
        try {
          await put([[ino, data]]);
        } catch (one) {
          first ??= one;
          // A file this write made goes from the tree (a rewritten one reads as it was before).
          const path = made && pending.get(ino) === data ? pathOf(ino) : null;
          if (path !== null) {
            (p as unknown as LightningInternals)._backend!._cache!.unlink(path);
            forget(path);
          }
        }
        done(ino, data);
      }
    }
    if (first !== null) throw first;
  }
  const letGo = () => {
    known.clear();
    knownBytes = 0;
    // Written back by the save that letting go makes, or dropped with the unsaved tree.
    pending.clear();
    fresh.clear();
    pendingBytes = 0;
  };
  let statOnly: ((path: string, size: number, mode: number | undefined) => Promise<{ ino: number }>) | null = null;
  /** Put `bytes` at `path`: the tree changes now, the bytes go to IndexedDB with the next save. */
  async function deferWrite(path: string, bytes: Uint8Array, o?: Parameters<StorageFs['writeFile']>[2]): Promise<void> {
    await ready;
    const internals = p as unknown as LightningInternals;
    if (
      !batching ||
      typeof internals._wrap !== 'function' ||
      !internals._backend?._cache ||
      !internals._backend._idb?._store
    ) {
      await p.writeFile(path, bytes, o);
      return;
    }
    // LightningFS's own wrapper: takes its fs-wide lock and schedules the save of the tree.
    statOnly ??= internals._wrap.call(
      p,
      async function (this: LightningInternals, path: string, size: number, mode: number | undefined) {
        return this._backend!._cache!.writeStat(path, size, { mode });
      } as never,
      (...args: unknown[]) => args,
      true,
    ) as never;
    const before = await p.lstat(path).catch(() => null);
    const st = await statOnly!(path, bytes.byteLength, typeof o === 'object' ? o?.mode : undefined);
    const made = before === null || before.ino !== st.ino || fresh.has(st.ino);
    dropPending(st.ino);
    pending.set(st.ino, bytes);
    if (made) fresh.add(st.ino);
    pendingBytes += bytes.byteLength;
    if (pendingBytes > PENDING_MAX) await writeBack();
  }
  /** Write `bytes`; `kept` (the same bytes) is remembered when no other write to the file overlapped. */
  async function writeKnown(
    path: string,
    bytes: Uint8Array,
    kept: Uint8Array,
    o?: Parameters<StorageFs['writeFile']>[2],
  ): Promise<void> {
    forget(path);
    writing.set(path, (writing.get(path) ?? 0) + 1);
    try {
      await deferWrite(path, bytes, o);
      if (writing.get(path) === 1) remember(path, statKey(await p.lstat(path)), kept);
    } finally {
      const n = writing.get(path)! - 1;
      if (n === 0) writing.delete(path);
      else writing.set(path, n);
    }
  }
  /** The bytes of the file at `path` (stat `st`) known without IndexedDB: held back, or remembered while its stat holds. */
  const bytesAt = (
    path: string,
    st: { ino: number; size: number; mtimeMs: number; isFile(): boolean },
  ): Uint8Array | undefined => {
    if (!st.isFile()) return undefined;
    const held = pending.get(st.ino);
    if (held !== undefined) return held;
    const hit = known.get(path);
    if (hit === undefined || hit.key !== statKey(st)) return undefined;
    // Most recently used last.
    known.delete(path);
    known.set(path, hit);
    return hit.data;
  };
  const asText = (o: Parameters<StorageFs['readFile']>[1]) =>
    o === 'utf8' || (typeof o === 'object' && o?.encoding === 'utf8');

  const fs: StorageFs = {
    readFile: (path, o) =>
      run('read', path, async () => {
        // The stat is in memory: a missing file is known without asking IndexedDB for its bytes.
        const st = await p.lstat(path).catch((err: { code?: string }) => {
          if (err?.code === 'ENOENT' || err?.code === 'ENOTDIR') throw err;
          return null;
        });
        const hit = st === null ? undefined : bytesAt(path, st);
        if (hit !== undefined) return asText(o) ? fromUtf8(hit) : hit.slice();
        const data = (await p.readFile(path)) as Uint8Array | null | undefined;
        if (data === undefined || data === null) {
          // The tree lists the file but its data never reached IndexedDB (reload in between).
          forget(path);
          return asText(o) ? '' : new Uint8Array(0);
        }
        if (st?.isFile() && !writing.has(path) && data.byteLength === st.size)
          remember(path, statKey(st), data.slice());
        return asText(o) ? fromUtf8(data) : data;
      }),
    writeFile: (path, data, o) =>
      run('write', path, async () => {
        await parentIsDir(path);
        const bytes = typeof data === 'string' ? utf8(data) : (exact(data) as Uint8Array);
        // A copy is remembered: the caller may reuse its buffer.
        await writeKnown(path, bytes, bytes === data ? bytes.slice() : bytes, o);
      }),
    unlink: (path) =>
      run('unlink', path, async () => {
        forget(path);
        const st = await p.lstat(path);
        if (st.isDirectory()) throw codeError('EISDIR', path);
        dropPending(st.ino);
        await p.unlink(path);
      }),
    readdir: (path) => run('readdir', path, () => p.readdir(path)),
    mkdir: (path, o) =>
      run('mkdir', path, async () => {
        await parentIsDir(path);
        await p.mkdir(path, o);
      }),
    rmdir: (path) => run('rmdir', path, () => p.rmdir(path)),
    stat: (path) => run('stat', path, () => p.stat(path) as Promise<StorageStat>),
    lstat: (path) => run('stat', path, () => p.lstat(path) as Promise<StorageStat>),
    rename: (from, to) =>
      run('rename', from, async () => {
        await parentIsDir(to);
        const moved = known.get(from);
        forget(from);
        forget(to);
        // A file renamed over is gone from the tree: bytes still held for it are not written.
        const over = await p.lstat(to).catch(() => null);
        if (over?.isFile()) {
          const src = await p.lstat(from).catch(() => null);
          if (src === null || src.ino !== over.ino) dropPending(over.ino);
        }
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
      return manager.request(lockName(opts.fsName, 'create-exclusive'), () =>
        run('create', path, async () => {
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
              tag !== owner &&
              tag >= MIN_OWNER &&
              !(await alive()).has(lockName(opts.fsName, `owner:${tag}`));
            if (!abandoned) return false;
            forget(path);
            dropPending(existing.ino);
            await p.unlink(path);
          }
          await parentIsDir(path);
          const bytes = typeof data === 'string' ? utf8(data) : (exact(data) as Uint8Array);
          await writeKnown(path, bytes === data ? bytes.slice() : bytes, bytes);
          return true;
        }),
      );
    },

    // Reflogs and the mirror's state log grow by a line a turn; LightningFS has no append. The
    // bytes known from the last read or write are extended, not read and decoded again.
    appendFile: (path, data) =>
      run('append', path, async () => {
        const add = typeof data === 'string' ? utf8(data) : data;
        const st = await p.lstat(path).catch(() => null);
        let old: Uint8Array = new Uint8Array(0);
        if (st !== null) old = bytesAt(path, st) ?? ((await p.readFile(path)) as Uint8Array | null | undefined) ?? old;
        const next = new Uint8Array(old.byteLength + add.byteLength);
        next.set(old, 0);
        next.set(add, old.byteLength);
        await parentIsDir(path);
        await writeKnown(path, next, next);
      }),

    flush,

    // The bytes held back are written now, so a ref never moves when its objects do not fit
    // (QUOTA_EXCEEDED before the move, as before). The tree is not saved here: it is saved whole,
    // refs and objects alike, and always after the bytes it names, so a reload finds a ref's old
    // value or its new one with every object it names; the sync's lock saves it when it lets go
    // (`withLock`). Without batching (LightningFS not as expected) the tree is saved now.
    async beforeRefMove() {
      await ready;
      if (!batching) {
        await flush();
        return;
      }
      try {
        await writeBack();
      } catch (err) {
        throw isQuotaError(err) ? quotaError(err, 'writing objects') : fsError(err, 'write', '/');
      }
    },

    async withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
      let granted = false;
      const wait = opts.syncLockTimeoutMs;
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
        return await manager.request(
          lockName(opts.fsName, key),
          wait === 0 ? { ifAvailable: true } : signal ? { signal } : {},
          async (lock) => {
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
          },
        );
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
  const report: PersistenceReport = {
    supported: typeof s?.persist === 'function',
    persisted: false,
    usage: null,
    quota: null,
  };
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
