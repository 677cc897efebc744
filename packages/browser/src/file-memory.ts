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

/**
 * The file memory of one browser storage over LightningFS `p` (initialised by `ready`).
 * `isBatching` tells whether LightningFS was patched (see `patchBackend`): until then, and if it
 * never is, bytes are written at once instead of held back.
 */
export function createFileMemory(p: LightningPromises, ready: Promise<void>, isBatching: () => boolean): FileMemory {
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
      !isBatching() ||
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
  return { known, writing, statKey, forget, remember, dropPending, bytesAt, writeBack, letGo, writeKnown };
}
