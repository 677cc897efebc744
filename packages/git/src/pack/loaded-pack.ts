import { EntityGitError } from '../errors.js';
import type { StorageStat } from '../storage/storage.js';
import { joinPath, type Store } from '../storage/store.js';
import { fromHex, toHex } from './codec.js';
import type { ObjectType } from './objects.js';

const TYPES: Record<number, ObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };
const OFS_DELTA = 6;
const REF_DELTA = 7;

/** Thrown for a pack this reader does not take (the caller falls back to another reader). */
export class UnsupportedPack extends Error {}

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
 * Many objects read at once stream through buffers of this size, each span of the pack read into
 * one with a single read, instead of filling the block cache: a cold open of a long session reads
 * tens of megabytes, and fresh pages cost more to fault in than the copy from the page cache.
 */
const SCRATCH = 1 << 20;
/** A gap between wanted entries up to this size is read through rather than split into two reads. */
const SCRATCH_GAP = 64 << 10;
/** Scratch buffers not in use, kept for the next bulk read (one each for a few concurrent ones). */
const scratchPool: Uint8Array[] = [];

/**
 * The bytes of a pack file: read whole, or — where the storage reads ranges — by the blocks a
 * read needs, so opening an early turn of a long session does not read all of its pack.
 */
class PackBytes {
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

/** The version of a pack index (`\xfftOc` and a version), or null when it is not one. */
function idxVersion(idx: Uint8Array): number | null {
  if (idx.length < 8 + 1024 + 40 || idx[0] !== 0xff || idx[1] !== 0x74 || idx[2] !== 0x4f || idx[3] !== 0x63)
    return null;
  return new DataView(idx.buffer, idx.byteOffset, idx.byteLength).getUint32(4);
}

/** The object ids a version-2 pack index lists; null when it is not a whole one. */
export function idxOids(idx: Uint8Array): string[] | null {
  if (idxVersion(idx) !== 2) return null;
  const n = new DataView(idx.buffer, idx.byteOffset, idx.byteLength).getUint32(8 + 255 * 4);
  if (idx.length < 8 + 1024 + n * 28 + 40) return null;
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(toHex(idx.subarray(8 + 1024 + i * 20, 8 + 1024 + i * 20 + 20)));
  return out;
}

/** Packs of a repository: the `.idx` files in `objects/pack` (an index is what makes a pack visible). */
export async function countPacks(store: Store, gitdir: string): Promise<number> {
  return (await store.readdir(joinPath(gitdir, 'objects', 'pack'))).filter((n) => n.endsWith('.idx')).length;
}

/** A pack and its version-2 index (in memory), and the pack's bytes. */
class LoadedPack {
  private readonly count: number;
  private readonly names: number;
  private readonly view: DataView;
  /** Objects rebuilt from deltas lately, by offset: a chain's bases are read once. */
  private readonly bases = new Map<number, { type: ObjectType; content: Uint8Array }>();
  private baseBytes = 0;
  /** Every entry's offset, ascending (built on first use): an entry ends where the next begins. */
  private offsets: Uint32Array | Float64Array | null = null;

  constructor(
    readonly path: string,
    private readonly idx: Uint8Array,
    private readonly pack: PackBytes,
    head: Uint8Array,
    private readonly store: Store,
  ) {
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

/**
 * 32-bit integers in ascending order, by three passes of 11 bits: a fresh reader sorts a pack's
 * offsets once, and for tens of thousands of entries this costs a fifth of the built-in sort.
 */
export function radixSort(values: Uint32Array<ArrayBuffer>): Uint32Array<ArrayBuffer> {
  let from = values;
  let to = new Uint32Array(values.length);
  const counts = new Uint32Array(2048);
  for (let shift = 0; shift < 32; shift += 11) {
    counts.fill(0);
    for (let i = 0; i < from.length; i++) counts[(from[i]! >>> shift) & 2047]!++;
    for (let b = 0, sum = 0; b < 2048; b++) {
      const c = counts[b]!;
      counts[b] = sum;
      sum += c;
    }
    for (let i = 0; i < from.length; i++) to[counts[(from[i]! >>> shift) & 2047]!++] = from[i]!;
    [from, to] = [to, from];
  }
  return from;
}

/**
 * A delta as a list of runs making its target: a copy of `len` bytes at `off` in the base (`src`
 * null), or bytes of `src` (an inserted run, a view into a delta).
 */
interface Runs {
  src: (Uint8Array | null)[];
  off: number[];
  len: number[];
  /** The base's size the delta was made for, and its target's. */
  baseSize: number;
  size: number;
}

/** git's delta format read into runs, every copy and insert checked against the sizes it states. */
function deltaRuns(delta: Uint8Array, where: string): Runs {
  let i = 0;
  const varint = (): number => {
    let n = 0;
    let shift = 1;
    for (;;) {
      const c = delta[i++];
      if (c === undefined) throw new EntityGitError('OBJECT_CORRUPT', `${where}: the delta is truncated`);
      n += (c & 0x7f) * shift;
      shift *= 128;
      if (!(c & 0x80)) return n;
    }
  };
  const runs: Runs = { src: [], off: [], len: [], baseSize: varint(), size: varint() };
  let at = 0;
  while (i < delta.length) {
    const op = delta[i++]!;
    if (op & 0x80) {
      let offset = 0;
      let n = 0;
      for (let k = 0; k < 4; k++) if (op & (1 << k)) offset += (delta[i++] ?? 0) * 2 ** (8 * k);
      for (let k = 0; k < 3; k++) if (op & (1 << (4 + k))) n += (delta[i++] ?? 0) * 2 ** (8 * k);
      if (i > delta.length) throw new EntityGitError('OBJECT_CORRUPT', `${where}: the delta is truncated`);
      if (n === 0) n = 0x10000;
      if (offset + n > runs.baseSize || at + n > runs.size)
        throw new EntityGitError('OBJECT_CORRUPT', `${where}: a delta copy out of range`);
      push(runs, null, offset, n);
      at += n;
    } else if (op > 0) {
      if (i + op > delta.length || at + op > runs.size)
        throw new EntityGitError('OBJECT_CORRUPT', `${where}: a delta insert out of range`);
      push(runs, delta, i, op);
      i += op;
      at += op;
    } else {
      throw new EntityGitError('OBJECT_CORRUPT', `${where}: delta opcode 0`);
    }
  }
  if (at !== runs.size)
    throw new EntityGitError('OBJECT_CORRUPT', `${where}: the delta made ${at} bytes, not ${runs.size}`);
  return runs;
}

/** A run appended, joined to the last one where it continues it. */
function push(runs: Runs, src: Uint8Array | null, off: number, len: number): void {
  const last = runs.len.length - 1;
  if (last >= 0 && runs.src[last] === src && runs.off[last]! + runs.len[last]! === off) runs.len[last]! += len;
  else {
    runs.src.push(src);
    runs.off.push(off);
    runs.len.push(len);
  }
}

/**
 * `upper` (a delta over `lower`'s target) rewritten over `lower`'s base: each copy of `upper`
 * becomes the runs of `lower` that made those bytes — copies of `lower`'s base, or its inserts.
 */
function compose(upper: Runs, lower: Runs): Runs {
  const out: Runs = { src: [], off: [], len: [], baseSize: lower.baseSize, size: upper.size };
  const starts = new Float64Array(lower.len.length);
  for (let j = 0, at = 0; j < lower.len.length; j++) {
    starts[j] = at;
    at += lower.len[j]!;
  }
  for (let k = 0; k < upper.len.length; k++) {
    const src = upper.src[k]!;
    if (src !== null) {
      push(out, src, upper.off[k]!, upper.len[k]!);
      continue;
    }
    let from = upper.off[k]!;
    let left = upper.len[k]!;
    // The run of `lower` that made byte `from`: the last one starting at or before it.
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid]! <= from) lo = mid;
      else hi = mid - 1;
    }
    for (let j = lo; left > 0; j++) {
      const skip = from - starts[j]!;
      const n = Math.min(left, lower.len[j]! - skip);
      push(out, lower.src[j]!, lower.off[j]! + skip, n);
      from += n;
      left -= n;
    }
  }
  return out;
}

/**
 * The object at the top of a delta chain: `deltas[0]` made over the target of `deltas[1]`, and so
 * on down to the last, made over `base`. The deltas are composed into one and applied once.
 */
export function applyDeltas(base: Uint8Array, deltas: readonly Uint8Array[], where = 'delta'): Uint8Array {
  let runs = deltaRuns(deltas[0]!, where);
  for (let k = 1; k < deltas.length; k++) {
    const lower = deltaRuns(deltas[k]!, where);
    if (runs.baseSize !== lower.size)
      throw new EntityGitError(
        'OBJECT_CORRUPT',
        `${where}: the delta's base is ${runs.baseSize} bytes, not ${lower.size}`,
      );
    runs = compose(runs, lower);
  }
  if (runs.baseSize !== base.length)
    throw new EntityGitError(
      'OBJECT_CORRUPT',
      `${where}: the delta's base is ${runs.baseSize} bytes, not ${base.length}`,
    );
  const out = new Uint8Array(runs.size);
  for (let k = 0, at = 0; k < runs.len.length; k++) {
    const src = runs.src[k] ?? base;
    const off = runs.off[k]!;
    out.set(src.subarray(off, off + runs.len[k]!), at);
    at += runs.len[k]!;
  }
  return out;
}

/** git's delta format: the target rebuilt from copies of the base and inserted bytes. */
export function applyDelta(base: Uint8Array, delta: Uint8Array, where = 'delta'): Uint8Array {
  return applyDeltas(base, [delta], where);
}

const packId = (st: StorageStat) => `${st.ino}:${st.size}:${st.mtimeMs}`;

/**
 * The packs of repositories, loaded once and kept (the most recently used few) for as long as
 * their files stay the same: reading a packed object is a binary search in the index and an
 * inflate at its offset, not a parse of the pack per object.
 */
export class PackCache {
  private readonly packs = new Map<string, { id: string; pack: LoadedPack }>();
  /** Per objects/pack directory: the index files it held when last listed. */
  private readonly lists = new Map<string, string[]>();

  // Room for every pack a repository holds between two runs of a packer (up to TURN_PACKS_MAX
  // small ones of its turns, and its big ones): a lookup that misses walks them all.
  constructor(
    private readonly store: Store,
    private readonly maxPacks = 64,
  ) {}

  private async load(path: string): Promise<LoadedPack | null> {
    // A pack is named by its checksum and never rewritten in place: once loaded, it is known
    // (checked against the file again only when it is loaded anew).
    const known = this.packs.get(path);
    if (known) {
      this.packs.delete(path);
      this.packs.set(path, known);
      return known.pack;
    }
    const packPath = path.replace(/\.idx$/, '.pack');
    const st = await this.store.lstat(packPath);
    if (st === null) return null;
    const id = packId(st);
    const idx = await this.store.read(path);
    const pack = idx === null ? null : await PackBytes.open(this.store, packPath, st.size);
    if (idx === null || pack === null) return null;
    let head: Uint8Array;
    try {
      head = await pack.range(0, 12);
    } catch (err) {
      // Removed since its lstat (a packer merged it away): not there, as if not listed.
      if ((await this.store.lstat(packPath)) === null) return null;
      throw err;
    }
    const loaded = new LoadedPack(packPath, idx, pack, head, this.store);
    this.packs.set(path, { id, pack: loaded });
    while (this.packs.size > this.maxPacks) this.packs.delete(this.packs.keys().next().value as string);
    return loaded;
  }

  /**
   * Forget what is known of the packs of `gitdir` (the listing and every loaded pack): after a
   * repair removed a damaged pack, a pack kept in memory would still answer for its objects.
   */
  forget(gitdir: string): void {
    const dir = joinPath(gitdir, 'objects', 'pack');
    this.lists.delete(dir);
    for (const path of [...this.packs.keys()]) if (path.startsWith(`${dir}/`)) this.packs.delete(path);
  }

  /** The pack at `path` loaded anew when its file is not the one loaded; else null. */
  private async reload(path: string): Promise<LoadedPack | null> {
    const known = this.packs.get(path);
    const st = await this.store.lstat(path.replace(/\.idx$/, '.pack'));
    if (!known || !st || packId(st) === known.id) return null;
    this.packs.delete(path);
    return this.load(path);
  }

  private async list(gitdir: string, fresh: boolean): Promise<string[]> {
    const dir = joinPath(gitdir, 'objects', 'pack');
    let names = fresh ? undefined : this.lists.get(dir);
    if (names === undefined) {
      names = (await this.store.readdir(dir))
        .filter((n) => n.endsWith('.idx'))
        .sort()
        .map((n) => joinPath(dir, n));
      this.lists.set(dir, names);
      while (this.lists.size > 256) this.lists.delete(this.lists.keys().next().value as string);
    }
    return names;
  }

  /**
   * The objects of `oids` that the packs of `gitdir` already listed hold, each handed to `emit`
   * (its content possibly a view valid during the call only, see {@link LoadedPack.scan}), pack by
   * pack in pack order: a read per span of a pack rather than several per object. Resolves with
   * which indexes were taken by `emit`; the caller reads the others one by one, with
   * {@link read}'s fallbacks and errors — an id no listed pack holds, a copy that failed to read,
   * a null in `oids` (not an object id). The contents are not checked against their ids here.
   */
  async forEach(
    gitdir: string,
    oids: readonly (string | null)[],
    outside: (oid: string) => Promise<{ type: ObjectType; content: Uint8Array }>,
    emit: (i: number, type: ObjectType, content: Uint8Array) => boolean,
  ): Promise<boolean[]> {
    const taken: boolean[] = new Array(oids.length).fill(false);
    const packs: LoadedPack[] = [];
    try {
      for (const path of await this.list(gitdir, false)) {
        const pack = await this.load(path);
        if (pack !== null) packs.push(pack);
      }
    } catch {
      return taken; // a pack this reader does not take, or one gone: each id is read alone
    }
    const byPack: { i: number; at: number }[][] = packs.map(() => []);
    for (let i = 0; i < oids.length; i++) {
      const oid = oids[i];
      if (oid === null || oid === undefined) continue;
      for (let k = 0; k < packs.length; k++) {
        const at = packs[k]!.offsetOf(oid);
        if (at < 0) continue;
        byPack[k]!.push({ i, at });
        break;
      }
    }
    for (let k = 0; k < packs.length; k++) {
      const items = byPack[k]!.sort((x, y) => x.at - y.at);
      if (items.length > 0)
        await packs[k]!.scan(items, outside, (i, type, content) => void (taken[i] = emit(i, type, content)));
    }
    return taken;
  }

  /**
   * The object from the packs of `gitdir`, or null when none holds it. The directory is listed
   * again before giving up, for a pack written since. Throws {@link UnsupportedPack} for a pack
   * it cannot read.
   */
  async read(
    gitdir: string,
    oid: string,
    outside: (oid: string) => Promise<{ type: ObjectType; content: Uint8Array }>,
    relist = true,
  ): Promise<{ type: ObjectType; content: Uint8Array } | null> {
    // A damaged copy in one pack does not hide a good one in another (a repair writes a new pack).
    let damaged: unknown = null;
    for (const fresh of relist ? [false, true] : [false]) {
      for (const path of await this.list(gitdir, fresh)) {
        const pack = await this.load(path);
        if (pack === null) continue;
        const at = pack.offsetOf(oid);
        if (at < 0) continue;
        try {
          return await pack.readAt(at, outside);
        } catch (err) {
          if (err instanceof UnsupportedPack) throw err;
          damaged = err;
        }
        // A damaged pack may have been replaced since it was loaded (a repair writes the same
        // objects, so the same pack name): load it again if the file is another one now.
        const again = await this.reload(path);
        const at2 = again?.offsetOf(oid) ?? -1;
        if (again && at2 >= 0) {
          try {
            return await again.readAt(at2, outside);
          } catch (err) {
            damaged = err;
          }
        }
      }
    }
    if (damaged !== null) throw damaged;
    return null;
  }
}
