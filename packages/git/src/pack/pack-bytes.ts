import { EntityGitError } from '../errors.js';
import type { Store } from '../storage/store.js';

/**
 * Bytes of a pack read in blocks of this size, where the storage reads ranges, for objects read
 * one at a time: a page, as small as the small objects read so (commits, the deltas of a tree's
 * chain — a sharded turn's shard trees are as many chains, each link in another part of the
 * pack), so a chain of fifty links reads fifty pages, not fifty large blocks. Many objects at
 * once are read by spans instead ({@link LoadedPack.scan}).
 */
const BLOCK = 4 << 10;
/** Blocks a pack keeps (the most recently used). */
const BLOCKS = 4096;

/**
 * The bytes of a pack file: read whole, or — where the storage reads ranges — by the blocks a
 * read needs, so opening an early turn of a long session does not read all of its pack.
 */
export class PackBytes {
  private readonly blocks = new Map<number, Uint8Array>();

  private constructor(
    private readonly store: Store,
    private readonly path: string,
    readonly size: number,
    private readonly whole: Uint8Array | null,
  ) {}

  static async open(store: Store, path: string, size: number): Promise<PackBytes | null> {
    if (!store.readsRanges) {
      const whole = await store.read(path);
      return whole === null ? null : new PackBytes(store, path, whole.length, whole);
    }
    return new PackBytes(store, path, size, null);
  }

  /** Bytes `start` to `end` when no read is needed for them (a block in memory), else null. */
  cached(start: number, end: number): Uint8Array | null {
    end = Math.min(end, this.size);
    if (this.whole !== null) return this.whole.subarray(start, end);
    const first = Math.floor(start / BLOCK);
    if (first !== Math.floor((end - 1) / BLOCK)) return null;
    const b = this.blocks.get(first);
    if (b === undefined) return null;
    this.blocks.delete(first);
    this.blocks.set(first, b);
    return b.subarray(start - first * BLOCK, end - first * BLOCK);
  }

  /** Whether the pack is read by parts (the storage reads ranges): a bulk read then streams it through a buffer of its own ({@link into}). */
  get streams(): boolean {
    return this.whole === null;
  }

  /** Bytes from `start` into `target` (fewer at the end of the pack); the count read. */
  async into(start: number, target: Uint8Array): Promise<number> {
    const n = await this.store.readRangeInto(
      this.path,
      start,
      target.subarray(0, Math.max(0, Math.min(target.length, this.size - start))),
    );
    if (n === null) throw new EntityGitError('OBJECT_CORRUPT', `${this.path}: the pack is gone`);
    return n;
  }

  /** Bytes `start` to `end` (fewer past the end of the pack). */
  async range(start: number, end: number): Promise<Uint8Array> {
    end = Math.min(end, this.size);
    if (this.whole !== null) return this.whole.subarray(start, end);
    const first = Math.floor(start / BLOCK);
    const last = Math.floor((end - 1) / BLOCK);
    if (first === last) return (await this.block(first)).subarray(start - first * BLOCK, end - first * BLOCK);
    // An object over several blocks: read at once, not kept (large outputs are read once).
    const bytes = await this.store.readRange(this.path, start, end);
    if (bytes === null || bytes.length !== end - start)
      throw new EntityGitError('OBJECT_CORRUPT', `${this.path}: the pack is shorter than its index says`);
    return bytes;
  }

  private async block(k: number): Promise<Uint8Array> {
    let b = this.blocks.get(k);
    if (b !== undefined) {
      this.blocks.delete(k);
      this.blocks.set(k, b);
      return b;
    }
    const read = await this.store.readRange(this.path, k * BLOCK, Math.min(this.size, (k + 1) * BLOCK));
    if (read === null) throw new EntityGitError('OBJECT_CORRUPT', `${this.path}: the pack is gone`);
    b = read;
    this.blocks.set(k, b);
    while (this.blocks.size > BLOCKS) this.blocks.delete(this.blocks.keys().next().value as number);
    return b;
  }
}
