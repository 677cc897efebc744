import { EntityGitError } from '../errors.js';
import { fromHex, toHex } from '../bytes/hex.js';
import type { ObjectType } from '../objects/frame.js';
import type { Store } from '../storage/store.js';
import { applyDeltas } from './delta.js';
import type { PackBytes } from './pack-bytes.js';
import { idxVersion, radixSort, UnsupportedPack } from './pack-index.js';

const TYPES: Record<number, ObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };
const OFS_DELTA = 6;
const REF_DELTA = 7;

/**
 * Many objects read at once stream through buffers of this size, each span of the pack read into
 * one with a single read, instead of filling the block cache: a cold open of a long session reads
 * tens of megabytes, and fresh pages cost more to fault in than the copy from the page cache.
 */
const SCRATCH = 1 << 20;
/** A gap between wanted entries up to this size is read through rather than split into two reads. */
const SCRATCH_GAP = 64 << 10;
/** Scratch buffers not in use, kept for the next bulk read (one each for a few concurrent ones). */
const scratchPool: Uint8Array[] = [];

/** A pack and its version-2 index (in memory), and the pack's bytes. */
export class LoadedPack {
  private readonly count: number;
  private readonly names: number;
  private readonly view: DataView;
  /** Objects rebuilt from deltas lately, by offset: a chain's bases are read once. */
  private readonly bases = new Map<number, { type: ObjectType; content: Uint8Array }>();
  private baseBytes = 0;
  /** Every entry's offset, ascending (built on first use): an entry ends where the next begins. */
  private offsets: Uint32Array | Float64Array | null = null;

  readonly path: string;
  private readonly idx: Uint8Array;
  private readonly pack: PackBytes;
  private readonly store: Store;

  /** The pack at `path`: its index's bytes `idx`, its bytes `pack` (whose first bytes are `head`), read through `store`. */
  constructor({
    path,
    idx,
    pack,
    head,
    store,
  }: { path: string; idx: Uint8Array; pack: PackBytes; head: Uint8Array; store: Store }) {
    this.path = path;
    this.idx = idx;
    this.pack = pack;
    this.store = store;
    const version = idxVersion(idx);
    if (version === null) throw new UnsupportedPack(`${path}: not a version-2 index`);
    if (version !== 2) throw new UnsupportedPack(`${path}: index version ${version}`);
    this.view = new DataView(idx.buffer, idx.byteOffset, idx.byteLength);
    this.count = this.view.getUint32(8 + 255 * 4);
    this.names = 8 + 1024;
    if (idx.length < this.names + this.count * 28 + 40)
      throw new EntityGitError('OBJECT_CORRUPT', `${path}: the index is truncated`);
    if (pack.size < 32 || head[0] !== 0x50 || head[1] !== 0x41 || head[2] !== 0x43 || head[3] !== 0x4b)
      throw new EntityGitError('OBJECT_CORRUPT', `${path}: not a pack`);
  }

  /** The offset of `oid` in the pack, or -1. */
  offsetOf(oid: string): number {
    const want = fromHex(oid);
    const first = want[0]!;
    let lo = first === 0 ? 0 : this.view.getUint32(8 + (first - 1) * 4);
    let hi = this.view.getUint32(8 + first * 4);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const at = this.names + mid * 20;
      let cmp = 0;
      for (let i = 0; i < 20 && cmp === 0; i++) cmp = this.idx[at + i]! - want[i]!;
      if (cmp === 0) {
        return this.offsetAt(mid);
      }
      if (cmp < 0) lo = mid + 1;
      else hi = mid;
    }
    return -1;
  }

  /**
   * The pack offset of the index's entry `i`: a 31-bit one, or — its top bit set, as git writes
   * offsets past 2 GiB — an index into the table of 64-bit offsets that follows.
   */
  private offsetAt(i: number): number {
    const off = this.view.getUint32(this.names + this.count * 24 + i * 4);
    if (!(off & 0x80000000)) return off;
    const at = this.names + this.count * 28 + 8 * (off & 0x7fffffff);
    if (at + 8 > this.idx.length - 40)
      throw new EntityGitError('OBJECT_CORRUPT', `${this.path}: a large offset past the end of the index`);
    return this.view.getUint32(at) * 2 ** 32 + this.view.getUint32(at + 4);
  }

  has(oid: string): boolean {
    return this.offsetOf(oid) >= 0;
  }

  /**
   * Where the entry at `offset` ends: the next entry's offset, or the pack's trailer. A zlib
   * stream is inflated from exactly its own bytes, so no codec ever sees the next entry (pako,
   * the portable one, reads on into a following stream and fails on it).
   */
  private endOf(offset: number): number {
    if (this.offsets === null) {
      const small = new Uint32Array(this.count);
      const base = this.names + this.count * 24;
      let large = false;
      for (let i = 0; i < this.count; i++)
        large ||= ((small[i] = this.view.getUint32(base + i * 4)) & 0x80000000) !== 0;
      if (large) {
        // A pack over 2 GiB: offsets of up to 53 bits, sorted as numbers.
        const all = new Float64Array(this.count);
        for (let i = 0; i < this.count; i++) all[i] = this.offsetAt(i);
        this.offsets = all.sort();
      } else this.offsets = radixSort(small);
    }
    const all = this.offsets;
    let lo = 0;
    let hi = all.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (all[mid]! <= offset) lo = mid + 1;
      else hi = mid;
    }
    return lo < all.length ? all[lo]! : this.pack.size - 20;
  }

  /** The zlib stream of the entry at `offset` inflated, `size` bytes (checked). */
  private inflateAt(offset: number, stream: Uint8Array, size: number): Uint8Array {
    const stored = storedBlock(stream, size);
    if (stored !== null) return stored.slice();
    let data: Uint8Array;
    try {
      data = this.store.codec.inflate(stream, size);
    } catch (err) {
      throw new EntityGitError(
        'OBJECT_CORRUPT',
        `${this.path}: the object at offset ${offset} does not inflate`,
        {},
        { cause: err },
      );
    }
    if (data.length !== size)
      throw new EntityGitError(
        'OBJECT_CORRUPT',
        `${this.path}: the object at offset ${offset} is ${data.length} bytes, not ${size}`,
      );
    return data;
  }

  /**
   * The objects at `items`' offsets, each handed to `emit` with its index, in pack order. Where
   * the storage reads ranges, spans of entries are read into a scratch buffer, a read a span, and a
   * stored block is handed as a view into it — valid during `emit` only; a delta, an entry larger
   * than the scratch, or one this cannot take goes through {@link readAt}. An entry that fails to
   * read is not emitted (the caller reads it alone). `emit` says whether it took the object.
   */
  async scan(
    items: readonly { i: number; at: number }[],
    outside: (oid: string) => Promise<{ type: ObjectType; content: Uint8Array }>,
    emit: Emit,
  ): Promise<void> {
    const one = async (i: number, at: number): Promise<void> => {
      let o: { type: ObjectType; content: Uint8Array };
      try {
        o = await this.readAt(at, outside); // takes the bytes in memory, if they are, without a read
      } catch {
        return;
      }
      emit(i, o.type, o.content);
    };
    if (!this.pack.streams) {
      for (const { i, at } of items) await one(i, at);
      return;
    }
    const scratch = scratchPool.pop() ?? new Uint8Array(SCRATCH);
    try {
      for (let k = 0; k < items.length; ) {
        const start = items[k]!.at;
        if (start >= this.pack.size - 20 || this.endOf(start) - start > SCRATCH) {
          await one(items[k]!.i, start);
          k++;
          continue;
        }
        // A span: entries that fit in the scratch together, with no wide gap between them.
        let last = k;
        let end = this.endOf(start);
        while (last + 1 < items.length) {
          const next = items[last + 1]!.at;
          const nextEnd = next < this.pack.size - 20 ? this.endOf(next) : Infinity;
          if (next - end > SCRATCH_GAP || nextEnd - start > SCRATCH) break;
          last++;
          end = Math.max(end, nextEnd);
        }
        let got: number;
        try {
          got = await this.pack.into(start, scratch.subarray(0, end - start));
        } catch {
          return; // the pack gone (a packer merged it away) or unreadable: the rest are read alone
        }
        for (; k <= last; k++) {
          const { i, at } = items[k]!;
          const entryEnd = this.endOf(at);
          const cached = this.bases.get(at);
          if (cached !== undefined || entryEnd - start > got) {
            await one(i, at);
            continue;
          }
          const b = scratch.subarray(at - start, entryEnd - start);
          const head = entryHead(b);
          const type = TYPES[head.code];
          const view = type === undefined ? null : storedBlock(b.subarray(head.at), head.size);
          if (type === undefined || view === null) {
            await one(i, at); // a delta, or compressed: read as one object
            continue;
          }
          emit(i, type, view);
        }
      }
    } finally {
      if (scratchPool.length < 4) scratchPool.push(scratch);
    }
  }

  /**
   * The object at `offset`, deltas applied. `outside` reads a REF_DELTA base from elsewhere. A
   * chain is walked down to its base (or to a link read before), its deltas composed into one and
   * applied once: a shard tree fifty links down is built once, not fifty times over.
   */
  async readAt(
    offset: number,
    outside: (oid: string) => Promise<{ type: ObjectType; content: Uint8Array }>,
  ): Promise<{ type: ObjectType; content: Uint8Array }> {
    const cached = this.bases.get(offset);
    if (cached) return cached;
    const deltas: Uint8Array[] = [];
    let at = offset;
    let base: { type: ObjectType; content: Uint8Array } | undefined;
    while (base === undefined) {
      if (deltas.length > 10_000)
        throw new EntityGitError('OBJECT_CORRUPT', `${this.path}: a delta chain that does not end`);
      if (at >= this.pack.size - 20)
        throw new EntityGitError('OBJECT_CORRUPT', `${this.path}: offset ${at} is past the end`);
      if (deltas.length > 0 && (base = this.bases.get(at)) !== undefined) break;
      // The entry's own bytes: its header, then its zlib stream up to where the next entry begins.
      const end = this.endOf(at);
      const b = this.pack.cached(at, end) ?? (await this.pack.range(at, end));
      const head = entryHead(b);
      const { code, size } = head;
      let p = head.at;
      if (code === OFS_DELTA) {
        let c = b[p++]!;
        let ofs = c & 0x7f;
        while (c & 0x80) {
          c = b[p++]!;
          ofs = (ofs + 1) * 128 + (c & 0x7f);
        }
        if (ofs === 0 || ofs > at)
          throw new EntityGitError(
            'OBJECT_CORRUPT',
            `${this.path}: the delta at offset ${at} has its base outside the pack`,
          );
        deltas.push(this.inflateAt(at, b.subarray(p), size));
        at -= ofs;
      } else if (code === REF_DELTA) {
        const ref = toHex(b.subarray(p, p + 20));
        deltas.push(this.inflateAt(at, b.subarray(p + 20), size));
        const inPack = this.offsetOf(ref);
        if (inPack >= 0) at = inPack;
        else base = await outside(ref);
      } else if (TYPES[code] === undefined) {
        throw new EntityGitError('OBJECT_CORRUPT', `${this.path}: object type ${code} at offset ${at}`);
      } else {
        base = { type: TYPES[code], content: this.inflateAt(at, b.subarray(p), size) };
      }
    }
    if (deltas.length === 0) return base;
    const out = { type: base.type, content: applyDeltas(base.content, deltas, this.path) };
    // Keep objects built from deltas (trees mostly: the next version's chain ends on this one), within a budget.
    if (out.content.length < 4 << 20) {
      this.bases.set(offset, out);
      this.baseBytes += out.content.length;
      for (const [k, v] of this.bases) {
        if (this.baseBytes <= 32 << 20) break;
        this.bases.delete(k);
        this.baseBytes -= v.content.length;
      }
    }
    return out;
  }
}

/**
 * The `size` bytes of a zlib stream made of one stored block (how entity-git packs a small blob),
 * a view into `stream`; null for any other stream, which the codec inflates. Its Adler-32 is not
 * checked: every object read from a pack is checked against its id before it is used
 * (ObjectStore), and a delta built on a damaged base fails that check too.
 */
function storedBlock(stream: Uint8Array, size: number): Uint8Array | null {
  if (size > 0xffff || stream.length < size + 11) return null;
  const cmf = stream[0]!;
  const flg = stream[1]!;
  // Deflate, no preset dictionary, a valid header check; then BFINAL set and BTYPE 00 (stored).
  if ((cmf & 0x0f) !== 8 || ((cmf << 8) | flg) % 31 !== 0 || (flg & 0x20) !== 0 || (stream[2]! & 0x07) !== 0x01)
    return null;
  const len = stream[3]! | (stream[4]! << 8);
  const nlen = stream[5]! | (stream[6]! << 8);
  if (len !== size || (len ^ 0xffff) !== nlen) return null;
  return stream.subarray(7, 7 + size);
}

/** Takes an object read by a bulk read: its index among the ids asked for, its type and content. */
type Emit = (i: number, type: ObjectType, content: Uint8Array) => void;

/** A pack entry's header: its type code, its size (inflated), and where what follows it begins. */
function entryHead(b: Uint8Array): { code: number; size: number; at: number } {
  let p = 0;
  let c = b[p++]!;
  const code = (c >> 4) & 7;
  let size = c & 15;
  for (let shift = 16; c & 0x80; shift *= 128) {
    c = b[p++]!;
    size += (c & 0x7f) * shift;
  }
  return { code, size, at: p };
}
