import type { StorageFs } from '@entity-git/git';
import type { LightningInternals } from './lightning-backend.js';
import type { LightningPromises } from './lightning-fs.js';

/** Files larger than this are not kept in memory after a read or write; nor more than the total. */
export const KNOWN_FILE_MAX = 1 << 20;
export const KNOWN_TOTAL_MAX = 16 << 20;
/** File bytes held back for the next save of the tree before they are written anyway. */
export const PENDING_MAX = 8 << 20;
/** The most bytes written back in one IndexedDB transaction (a larger file goes alone). */
export const BATCH_BYTES = 1 << 20;

type WriteOptions = Parameters<StorageFs['writeFile']>[2];

/**
 * What a browser storage keeps of its files in memory, around LightningFS: small files it read or
 * wrote (answered again without IndexedDB while their stat holds), and file bytes held back until
 * the next save of the directory tree, then written together. See {@link createFileMemory}.
 */
export interface FileMemory {
  readonly known: Map<string, { key: string; data: Uint8Array }>;
  /** Writes in progress, by path: a file being written is not remembered from a read. */
  readonly writing: Map<string, number>;
  statKey(st: { ino?: number; size: number; mtimeMs: number }): string;
  forget(path: string): void;
  remember(path: string, key: string, data: Uint8Array): void;
  dropPending(ino: number): void;
  bytesAt(path: string, st: { ino: number; size: number; mtimeMs: number; isFile(): boolean }): Uint8Array | undefined;
  writeBack(): Promise<void>;
  letGo(): void;
  writeKnown(path: string, bytes: Uint8Array, kept: Uint8Array, o?: WriteOptions): Promise<void>;
}

/** The state behind one {@link FileMemory}: LightningFS, what is known and held back, and their sizes. */
interface MemoryState {
  readonly p: LightningPromises;
  readonly ready: Promise<void>;
  readonly isBatching: () => boolean;
  /**
   * Small files this page read or wrote, with the stat they had then (LightningFS keeps every
   * stat in memory; reading a file's bytes is an IndexedDB round trip). A read whose file still
   * has that stat is answered from here: refs, HEAD, config, reflogs and the mirror's state log
   * are read again by every sync. Forgotten whenever LightningFS lets go of the file system
   * (another tab may write then) and on any write this page makes to the file.
   */
  readonly known: Map<string, { key: string; data: Uint8Array }>;
  knownBytes: number;
  /** Writes in progress, by path: a file being written is not remembered from a read. */
  readonly writing: Map<string, number>;
  /**
   * File bytes written since the tree was last saved, by inode: LightningFS would put each file
   * in an IndexedDB transaction of its own (a round trip each, most of a turn's cost); they are
   * put together, in one, just before the tree is saved (`flush()`, going idle, or LightningFS's
   * own debounced save) — so the saved tree never names bytes IndexedDB lacks. Reads of such a
   * file are answered from here.
   */
  readonly pending: Map<number, Uint8Array>;
  /** Inodes made by a held-back write: IndexedDB has no bytes at all for them yet. */
  readonly fresh: Set<number>;
  pendingBytes: number;
  /** LightningFS's wrapper around a stat-only write, made on the first held-back write. */
  statOnly: ((path: string, size: number, mode: number | undefined) => Promise<{ ino: number }>) | null;
}

/**
 * The file memory of one browser storage over LightningFS `p` (initialised by `ready`).
 * `isBatching` tells whether LightningFS was patched (see `patchBackend`): until then, and if it
 * never is, bytes are written at once instead of held back.
 */
export function createFileMemory(p: LightningPromises, ready: Promise<void>, isBatching: () => boolean): FileMemory {
  const m: MemoryState = {
    p,
    ready,
    isBatching,
    known: new Map(),
    knownBytes: 0,
    writing: new Map(),
    pending: new Map(),
    fresh: new Set(),
    pendingBytes: 0,
    statOnly: null,
  };
  return {
    known: m.known,
    writing: m.writing,
    statKey,
    forget: (path) => forget(m, path),
    remember: (path, key, data) => remember(m, path, key, data),
    dropPending: (ino) => dropPending(m, ino),
    bytesAt: (path, st) => bytesAt(m, path, st),
    writeBack: () => writeBack(m),
    letGo: () => letGo(m),
    writeKnown: (path, bytes, kept, o) => writeKnown(m, path, bytes, kept, o),
  };
}

const statKey = (st: { ino?: number; size: number; mtimeMs: number }) => `${st.ino ?? ''}:${st.size}:${st.mtimeMs}`;

function forget(m: MemoryState, path: string): void {
  const e = m.known.get(path);
  if (e) {
    m.known.delete(path);
    m.knownBytes -= e.data.byteLength;
  }
}

function remember(m: MemoryState, path: string, key: string, data: Uint8Array): void {
  forget(m, path);
  if (data.byteLength > KNOWN_FILE_MAX) return;
  m.known.set(path, { key, data });
  m.knownBytes += data.byteLength;
  for (const [k] of m.known) {
    if (m.knownBytes <= KNOWN_TOTAL_MAX) break;
    forget(m, k);
  }
}

function dropPending(m: MemoryState, ino: number): void {
  const data = m.pending.get(ino);
  if (data !== undefined) {
    m.pending.delete(ino);
    m.fresh.delete(ino);
    m.pendingBytes -= data.byteLength;
  }
}

/** The path of the file with inode `ino` in LightningFS's tree, or null (a walk: failures only). */
function pathOf(p: LightningPromises, ino: number): string | null {
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

async function writeBack(m: MemoryState): Promise<void> {
  if (m.pending.size === 0) return;
  // Smallest first, in transactions of up to BATCH_BYTES (one file larger than that alone): a
  // turn's files go in one, and on a full origin a large file cannot take the small ones —
  // the repository's own — down with it.
  const batch = [...m.pending].sort((x, y) => x[1].byteLength - y[1].byteLength);
  const store = (m.p as unknown as LightningInternals)._backend!._idb!._store!;
  const put = (items: [number, Uint8Array][]) =>
    store._withIDBStore('readwrite', (os) => {
      for (const [ino, data] of items) os.put(data, ino);
    });
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
      for (const [ino, data] of group) written(m, ino, data);
      continue;
    } catch {
      // A transaction lands whole or not at all: file by file, what fits still lands, as
      // LightningFS's own writes would.
    }
    for (const [ino, data] of group) {
      const made = m.fresh.has(ino);
      try {
        await put([[ino, data]]);
      } catch (one) {
        first ??= one;
        // A file this write made goes from the tree (a rewritten one reads as it was before).
        const path = made && m.pending.get(ino) === data ? pathOf(m.p, ino) : null;
        if (path !== null) {
          (m.p as unknown as LightningInternals)._backend!._cache!.unlink(path);
          forget(m, path);
        }
      }
      written(m, ino, data);
    }
  }
  if (first !== null) throw first;
}

/** `data` reached IndexedDB (or never will): no longer held, unless the file was written again meanwhile. */
function written(m: MemoryState, ino: number, data: Uint8Array): void {
  if (m.pending.get(ino) === data) dropPending(m, ino);
}

function letGo(m: MemoryState): void {
  m.known.clear();
  m.knownBytes = 0;
  // Written back by the save that letting go makes, or dropped with the unsaved tree.
  m.pending.clear();
  m.fresh.clear();
  m.pendingBytes = 0;
}

/** Put `bytes` at `path`: the tree changes now, the bytes go to IndexedDB with the next save. */
async function deferWrite(m: MemoryState, path: string, bytes: Uint8Array, o?: WriteOptions): Promise<void> {
  const { p } = m;
  await m.ready;
  const internals = p as unknown as LightningInternals;
  if (
    !m.isBatching() ||
    typeof internals._wrap !== 'function' ||
    !internals._backend?._cache ||
    !internals._backend._idb?._store
  ) {
    await p.writeFile(path, bytes, o);
    return;
  }
  // LightningFS's own wrapper: takes its fs-wide lock and schedules the save of the tree.
  m.statOnly ??= internals._wrap.call(
    p,
    async function (this: LightningInternals, path: string, size: number, mode: number | undefined) {
      return this._backend!._cache!.writeStat(path, size, { mode });
    } as never,
    (...args: unknown[]) => args,
    true,
  ) as never;
  const before = await p.lstat(path).catch(() => null);
  const st = await m.statOnly!(path, bytes.byteLength, typeof o === 'object' ? o?.mode : undefined);
  const made = before === null || before.ino !== st.ino || m.fresh.has(st.ino);
  dropPending(m, st.ino);
  m.pending.set(st.ino, bytes);
  if (made) m.fresh.add(st.ino);
  m.pendingBytes += bytes.byteLength;
  if (m.pendingBytes > PENDING_MAX) await writeBack(m);
}

/** Write `bytes`; `kept` (the same bytes) is remembered when no other write to the file overlapped. */
async function writeKnown(
  m: MemoryState,
  path: string,
  bytes: Uint8Array,
  kept: Uint8Array,
  o?: WriteOptions,
): Promise<void> {
  forget(m, path);
  m.writing.set(path, (m.writing.get(path) ?? 0) + 1);
  try {
    await deferWrite(m, path, bytes, o);
    if (m.writing.get(path) === 1) remember(m, path, statKey(await m.p.lstat(path)), kept);
  } finally {
    const n = m.writing.get(path)! - 1;
    if (n === 0) m.writing.delete(path);
    else m.writing.set(path, n);
  }
}

/** The bytes of the file at `path` (stat `st`) known without IndexedDB: held back, or remembered while its stat holds. */
function bytesAt(
  m: MemoryState,
  path: string,
  st: { ino: number; size: number; mtimeMs: number; isFile(): boolean },
): Uint8Array | undefined {
  if (!st.isFile()) return undefined;
  const held = m.pending.get(st.ino);
  if (held !== undefined) return held;
  const hit = m.known.get(path);
  if (hit === undefined || hit.key !== statKey(st)) return undefined;
  // Most recently used last.
  m.known.delete(path);
  m.known.set(path, hit);
  return hit.data;
}
