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

/** The key of a stat a remembered file's bytes hold for: inode, size and modification time. */
export const statKey = (st: { ino?: number; size: number; mtimeMs: number }) =>
  `${st.ino ?? ''}:${st.size}:${st.mtimeMs}`;

/** LightningFS's wrapper around a stat-only write, made on the first held-back write. */
type StatOnly = (path: string, size: number, mode: number | undefined) => Promise<{ ino: number }>;

/**
 * What a browser storage keeps of its files in memory, around LightningFS: small files it read or
 * wrote (answered again without IndexedDB while their stat holds), and file bytes held back until
 * the next save of the directory tree, then written together.
 */
export class FileMemory {
  readonly #p: LightningPromises;
  readonly #ready: Promise<void>;
  readonly #isBatching: () => boolean;
  /**
   * Small files this page read or wrote, with the stat they had then (LightningFS keeps every
   * stat in memory; reading a file's bytes is an IndexedDB round trip). A read whose file still
   * has that stat is answered from here: refs, HEAD, config, reflogs and the mirror's state log
   * are read again by every sync. Forgotten whenever LightningFS lets go of the file system
   * (another tab may write then) and on any write this page makes to the file.
   */
  readonly #known = new Map<string, { key: string; data: Uint8Array }>();
  #knownBytes = 0;
  /** Writes in progress, by path: a file being written is not remembered from a read. */
  readonly #writing = new Map<string, number>();
  /**
   * File bytes written since the tree was last saved, by inode: LightningFS would put each file
   * in an IndexedDB transaction of its own (a round trip each, most of a turn's cost); they are
   * put together, in one, just before the tree is saved (`flush()`, going idle, or LightningFS's
   * own debounced save) — so the saved tree never names bytes IndexedDB lacks. Reads of such a
   * file are answered from here.
   */
  readonly #pending = new Map<number, Uint8Array>();
  /** Inodes made by a held-back write: IndexedDB has no bytes at all for them yet. */
  readonly #fresh = new Set<number>();
  #pendingBytes = 0;
  #statOnly: StatOnly | null = null;

  /**
   * The file memory of one browser storage over LightningFS `p` (initialised by `ready`).
   * `isBatching` tells whether LightningFS was patched (see `patchBackend`): until then, and if it
   * never is, bytes are written at once instead of held back.
   */
  constructor(p: LightningPromises, ready: Promise<void>, isBatching: () => boolean) {
    this.#p = p;
    this.#ready = ready;
    this.#isBatching = isBatching;
  }

  /** What is remembered of the file at `path`: the key of its stat then, and its bytes. */
  knownAt(path: string): { key: string; data: Uint8Array } | undefined {
    return this.#known.get(path);
  }

  /** Whether a write to `path` is in progress (a file being written is not remembered from a read). */
  isWriting(path: string): boolean {
    return this.#writing.has(path);
  }

  forget(path: string): void {
    const e = this.#known.get(path);
    if (e) {
      this.#known.delete(path);
      this.#knownBytes -= e.data.byteLength;
    }
  }

  remember(path: string, key: string, data: Uint8Array): void {
    this.forget(path);
    if (data.byteLength > KNOWN_FILE_MAX) return;
    this.#known.set(path, { key, data });
    this.#knownBytes += data.byteLength;
    for (const [k] of this.#known) {
      if (this.#knownBytes <= KNOWN_TOTAL_MAX) break;
      this.forget(k);
    }
  }

  dropPending(ino: number): void {
    const data = this.#pending.get(ino);
    if (data !== undefined) {
      this.#pending.delete(ino);
      this.#fresh.delete(ino);
      this.#pendingBytes -= data.byteLength;
    }
  }

  /** The bytes of the file at `path` (stat `st`) known without IndexedDB: held back, or remembered while its stat holds. */
  bytesAt(path: string, st: { ino: number; size: number; mtimeMs: number; isFile(): boolean }): Uint8Array | undefined {
    if (!st.isFile()) return undefined;
    const held = this.#pending.get(st.ino);
    if (held !== undefined) return held;
    const hit = this.#known.get(path);
    if (hit === undefined || hit.key !== statKey(st)) return undefined;
    // Most recently used last.
    this.#known.delete(path);
    this.#known.set(path, hit);
    return hit.data;
  }

  /** Write the held-back bytes to IndexedDB; the first failure is thrown once all were tried. */
  async writeBack(): Promise<void> {
    if (this.#pending.size === 0) return;
    // Smallest first, in transactions of up to BATCH_BYTES (one file larger than that alone): a
    // turn's files go in one, and on a full origin a large file cannot take the small ones —
    // the repository's own — down with it.
    const batch = [...this.#pending].sort((x, y) => x[1].byteLength - y[1].byteLength);
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
        await this.#put(group);
        for (const [ino, data] of group) this.#written(ino, data);
        continue;
      } catch {
        // A transaction lands whole or not at all: file by file, what fits still lands, as
        // LightningFS's own writes would.
      }
      for (const [ino, data] of group) {
        const failed = await this.#writeOne(ino, data);
        first ??= failed;
      }
    }
    if (first !== null) throw first;
  }

  /** Forget everything: LightningFS let go of the file system. */
  letGo(): void {
    this.#known.clear();
    this.#knownBytes = 0;
    // Written back by the save that letting go makes, or dropped with the unsaved tree.
    this.#pending.clear();
    this.#fresh.clear();
    this.#pendingBytes = 0;
  }

  /** Write `bytes`; `kept` (the same bytes) is remembered when no other write to the file overlapped. */
  async writeKnown(path: string, bytes: Uint8Array, kept: Uint8Array, o?: WriteOptions): Promise<void> {
    this.forget(path);
    this.#writing.set(path, (this.#writing.get(path) ?? 0) + 1);
    try {
      await this.#deferWrite(path, bytes, o);
      if (this.#writing.get(path) === 1) this.remember(path, statKey(await this.#p.lstat(path)), kept);
    } finally {
      const n = this.#writing.get(path)! - 1;
      if (n === 0) this.#writing.delete(path);
      else this.#writing.set(path, n);
    }
  }

  /** Put `items` in one IndexedDB transaction. */
  #put(items: [number, Uint8Array][]): Promise<void> {
    const store = (this.#p as unknown as LightningInternals)._backend!._idb!._store!;
    return store._withIDBStore('readwrite', (os) => {
      for (const [ino, data] of items) os.put(data, ino);
    });
  }

  /** Put one file's bytes alone; the error, if it failed (a file it made then goes from the tree), else null. */
  async #writeOne(ino: number, data: Uint8Array): Promise<unknown> {
    const made = this.#fresh.has(ino);
    let failed: unknown = null;
    try {
      await this.#put([[ino, data]]);
    } catch (err) {
      failed = err;
      // A file this write made goes from the tree (a rewritten one reads as it was before).
      const path = made && this.#pending.get(ino) === data ? pathOf(this.#p, ino) : null;
      if (path !== null) {
        (this.#p as unknown as LightningInternals)._backend!._cache!.unlink(path);
        this.forget(path);
      }
    }
    this.#written(ino, data);
    return failed;
  }

  /** `data` reached IndexedDB (or never will): no longer held, unless the file was written again meanwhile. */
  #written(ino: number, data: Uint8Array): void {
    if (this.#pending.get(ino) === data) this.dropPending(ino);
  }

  /** Put `bytes` at `path`: the tree changes now, the bytes go to IndexedDB with the next save. */
  async #deferWrite(path: string, bytes: Uint8Array, o?: WriteOptions): Promise<void> {
    const p = this.#p;
    await this.#ready;
    const internals = p as unknown as LightningInternals;
    if (
      !this.#isBatching() ||
      typeof internals._wrap !== 'function' ||
      !internals._backend?._cache ||
      !internals._backend._idb?._store
    ) {
      await p.writeFile(path, bytes, o);
      return;
    }
    // LightningFS's own wrapper: takes its fs-wide lock and schedules the save of the tree.
    this.#statOnly ??= internals._wrap.call(
      p,
      async function (this: LightningInternals, path: string, size: number, mode: number | undefined) {
        return this._backend!._cache!.writeStat(path, size, { mode });
      } as never,
      (...args: unknown[]) => args,
      true,
    ) as never;
    const before = await p.lstat(path).catch(() => null);
    const st = await this.#statOnly!(path, bytes.byteLength, typeof o === 'object' ? o?.mode : undefined);
    const made = before === null || before.ino !== st.ino || this.#fresh.has(st.ino);
    this.dropPending(st.ino);
    this.#pending.set(st.ino, bytes);
    if (made) this.#fresh.add(st.ino);
    this.#pendingBytes += bytes.byteLength;
    if (this.#pendingBytes > PENDING_MAX) await this.writeBack();
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
