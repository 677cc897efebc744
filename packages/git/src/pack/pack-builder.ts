import { EntityGitError } from '../errors.js';
import { fromHex, hexInto } from '../bytes/hex.js';
import { utf8 } from '../bytes/utf8.js';
import { storedZlibInto, storedZlibLength, type Codec } from '../codec/codec.js';
import { isOid, type ObjectType } from '../objects/frame.js';
import { joinPath } from '../storage/paths.js';
import type { Store } from '../storage/store.js';
import { prefixSuffixDelta } from './delta.js';

const TYPE_CODE: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };
const OFS_DELTA = 6;

// CRC-32 by eight bytes a step ("slicing-by-8"): table k gives a byte's CRC followed by k zero bytes.
const CRC_TABLES = (() => {
  const t = new Int32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  for (let n = 0; n < 256; n++)
    for (let k = 1; k < 8; k++) t[k * 256 + n] = (t[(k - 1) * 256 + n]! >>> 8) ^ t[t[(k - 1) * 256 + n]! & 0xff]!;
  return t;
})();

function crc32(p: Uint8Array, from: number, to: number): number {
  const t = CRC_TABLES;
  let c = -1;
  let i = from;
  for (; i + 8 <= to; i += 8) {
    const a = c ^ (p[i]! | (p[i + 1]! << 8) | (p[i + 2]! << 16) | (p[i + 3]! << 24));
    c =
      t[1792 + (a & 0xff)]! ^
      t[1536 + ((a >>> 8) & 0xff)]! ^
      t[1280 + ((a >>> 16) & 0xff)]! ^
      t[1024 + (a >>> 24)]! ^
      t[768 + p[i + 4]!]! ^
      t[512 + p[i + 5]!]! ^
      t[256 + p[i + 6]!]! ^
      t[p[i + 7]!]!;
  }
  for (; i < to; i++) c = t[(c ^ p[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

interface Entry {
  oid: string;
  offset: number;
  crc: number;
}

/** Bytes of the pack copied or hashed between two of {@link PackBuilder.write}'s pauses. */
const SLICE_BYTES = 1 << 20;
/** Index entries made between two of its pauses. */
const SLICE_ENTRIES = 512;

/**
 * SHA-1 of `data` as the codec gives it; with `between`, and a codec that hashes in parts
 * ({@link Codec.sha1Stream}), in slices of {@link SLICE_BYTES} with `between` awaited after each.
 */
async function sliceHash(codec: Codec, data: Uint8Array, between: (() => Promise<void>) | null): Promise<string> {
  if (between === null || codec.sha1Stream === undefined || data.length <= SLICE_BYTES) return codec.sha1(data);
  const h = codec.sha1Stream();
  for (let i = 0; i < data.length; i += SLICE_BYTES) {
    h.update(data.subarray(i, Math.min(data.length, i + SLICE_BYTES)));
    await between();
  }
  return h.digest();
}

/** The size of a full chunk of {@link PackBuilder}'s entries (a larger entry has one of its own). */
const CHUNK_BYTES = 1 << 20;

/** An entry's head, made here before it is copied into the pack. */
const HEAD = new Uint8Array(20);

/** No reader follows a delta chain longer than this (git's default depth). */
const MAX_DEPTH = 50;

/** The first trees of delta chains kept to restart a chain from (see {@link PackBuilder.add}). */
const CHAIN_STARTS = 16;

/**
 * A blob up to this size goes into a pack stored, not compressed (a zlib stream of one stored
 * block, which any git reads). Opening a turn reads thousands of small message blobs, and setting
 * up an inflate for each cost more than reading the bytes it saves (see docs/decisions.md, "Packing"); larger
 * blobs — tool outputs — are compressed.
 */
export const STORED_BLOB_MAX = 16 << 10;

/**
 * Write an entry's head into {@link HEAD}: type and size (4 bits, then 7 a byte), then a delta's
 * base offset `ofs` (7 bits a byte, most significant first, each continued byte one less; none
 * when `ofs` < 0). Returns its length.
 */
function entryHead(code: number, size: number, ofs: number): number {
  const head = HEAD;
  let h = 0;
  let n = size;
  let first = (code << 4) | (n & 0x0f);
  n = Math.floor(n / 16);
  while (n > 0) {
    head[h++] = first | 0x80;
    first = n & 0x7f;
    n = Math.floor(n / 128);
  }
  head[h++] = first;
  if (ofs >= 0) {
    const enc = [ofs & 0x7f];
    while ((ofs = Math.floor(ofs / 128)) > 0) {
      ofs -= 1;
      enc.push(0x80 | (ofs & 0x7f));
    }
    for (let i = enc.length - 1; i >= 0; i--) head[h++] = enc[i]!;
  }
  return h;
}

/**
 * A pack built in memory, object by object, then written as `pack-<id>.pack` + `.idx`. A tree
 * given a `base` (or, with {@link addTree}, the last tree added under the same path key) is
 * stored as a delta of it when that is much smaller.
 */
export class PackBuilder {
  /**
   * The pack's entries as they are built, in chunks of at least {@link CHUNK_BYTES} filled one
   * after the other (the 12-byte header is written last, into the file): not two small arrays an
   * object kept until the end (a backfill's tens of thousands of them were much of the garbage
   * collector's work), nor one buffer whose every growth copies all of it.
   */
  private readonly chunks: { bytes: Uint8Array; used: number }[] = [];
  private size = 12;
  private readonly entries: Entry[] = [];
  private readonly offsets = new Map<string, { offset: number; depth: number }>();
  private readonly lastTree = new Map<string, { oid: string; content: Uint8Array }>();
  /** Per tree added: the tree its delta chain began with (itself when stored whole or restarted). */
  private readonly chainStart = new Map<string, string>();
  /** The contents of the most recent chain starts, oldest first. */
  private readonly startContent = new Map<string, Uint8Array>();
  deltas = 0;

  /**
   * `storeTrees`: a tree that is not a delta is stored uncompressed (a turn's pack: the packer
   * compresses it). A blob of up to {@link STORED_BLOB_MAX} is stored uncompressed in every pack.
   */
  constructor(
    private readonly store: Store,
    private readonly options: { storeTrees?: boolean } = {},
  ) {}

  get count(): number {
    return this.entries.length;
  }

  has(oid: string): boolean {
    return this.offsets.has(oid);
  }

  /** Add a tree, as a delta of the last tree added under `path` when that pays. */
  addTree(oid: string, content: Uint8Array, path: string): void {
    this.add(oid, 'tree', content, this.lastTree.get(path) ?? null);
    this.lastTree.set(path, { oid, content });
  }

  /**
   * Add an object; a tree given a `base` becomes a delta of it (or of the tree its chain began
   * with, see {@link deltaBase}) when that is much smaller. An object added before is skipped.
   */
  add(oid: string, type: ObjectType, content: Uint8Array, given: { oid: string; content: Uint8Array } | null): void {
    if (this.offsets.has(oid)) return;
    const at = this.size;
    let code = TYPE_CODE[type];
    let body = content;
    let depth = 0;
    let ofs = -1;
    const { base, baseAt, restarted } = this.deltaBase(type, given);
    if (base && baseAt !== undefined && baseAt.depth < MAX_DEPTH) {
      const delta = prefixSuffixDelta(base.content, content);
      if (delta) {
        code = OFS_DELTA;
        body = delta;
        depth = baseAt.depth + 1;
        ofs = at - baseAt.offset;
        this.deltas++;
      }
    }
    const h = entryHead(code, body.length, ofs);
    const stored =
      code === TYPE_CODE.blob
        ? body.length <= STORED_BLOB_MAX
        : code === TYPE_CODE.tree && this.options.storeTrees === true;
    const codec = this.store.codec;
    // A stored entry is written straight into the chunk; a compressed one is copied in.
    const data = stored ? null : codec.deflatePackEntry ? codec.deflatePackEntry(body) : codec.deflate(body);
    const length = h + (data === null ? storedZlibLength(body.length) : data.length);
    const crc = this.append(h, length, data ?? body, data === null);
    this.size = at + length;
    this.offsets.set(oid, { offset: at, depth });
    this.entries.push({ oid, offset: at, crc });
    if (type === 'tree') this.noteChain(oid, content, depth > 0 && !restarted && base ? base.oid : null);
  }

  /**
   * The base a tree's delta is made against. A tree whose base ends a chain of MAX_DEPTH deltas
   * is a delta of the tree that chain began with (one level deeper) rather than stored whole: a
   * turn's tree differs from that one by a few dozen turns' entries, where stored whole it would
   * hold the session's every message (the flat messages/ tree: tens of kilobytes every 50 turns,
   * most of a long session's pack). Each restart starts a chain one level deeper, so a whole tree
   * comes once in ~1,275 turns.
   */
  private deltaBase(
    type: ObjectType,
    given: { oid: string; content: Uint8Array } | null,
  ): {
    base: { oid: string; content: Uint8Array } | null;
    baseAt: { offset: number; depth: number } | undefined;
    restarted: boolean;
  } {
    const baseAt = given ? this.offsets.get(given.oid) : undefined;
    if (type === 'tree' && given && baseAt !== undefined && baseAt.depth >= MAX_DEPTH) {
      const start = this.chainStart.get(given.oid);
      const startContent = start === undefined ? undefined : this.startContent.get(start);
      const startAt = start === undefined ? undefined : this.offsets.get(start);
      if (start !== undefined && startContent !== undefined && startAt !== undefined && startAt.depth < MAX_DEPTH)
        return { base: { oid: start, content: startContent }, baseAt: startAt, restarted: true };
    }
    return { base: given, baseAt, restarted: false };
  }

  /**
   * Copy an entry of `length` bytes ({@link HEAD}'s first `h` bytes, then `data`, or `data`
   * framed as zlib's stored blocks when `store`) into the chunks; its CRC-32.
   */
  private append(h: number, length: number, data: Uint8Array, store: boolean): number {
    let chunk = this.chunks.at(-1);
    if (chunk === undefined || chunk.used + length > chunk.bytes.length) {
      // 64 KB first (a live turn's pack is a few), doubling up to CHUNK_BYTES.
      const size = Math.max(length, Math.min(CHUNK_BYTES, (64 << 10) << this.chunks.length));
      chunk = { bytes: new Uint8Array(size), used: 0 };
      this.chunks.push(chunk);
    }
    const from = chunk.used;
    for (let i = 0; i < h; i++) chunk.bytes[from + i] = HEAD[i]!;
    if (store) storedZlibInto(data, chunk.bytes, from + h);
    else chunk.bytes.set(data, from + h);
    chunk.used += length;
    return crc32(chunk.bytes, from, chunk.used);
  }

  /** Record where a tree's chain began: its base's start (`continued`), else the tree itself. */
  private noteChain(oid: string, content: Uint8Array, continued: string | null): void {
    const start = continued === null ? undefined : this.chainStart.get(continued);
    if (start !== undefined) this.chainStart.set(oid, start);
    else {
      this.chainStart.set(oid, oid);
      this.startContent.set(oid, content);
      if (this.startContent.size > CHAIN_STARTS) this.startContent.delete(this.startContent.keys().next().value!);
    }
  }

  /**
   * Write the pack and its index into `gitdir` (the index last: it is what makes the pack
   * visible), or nothing when no object was added. `pause`, when given, is asked between two
   * slices of the work (about {@link SLICE_BYTES} of the pack copied or hashed, a few hundred
   * index entries) and awaited when it answers a promise: how a caller gives its host's event
   * loop a turn while a large pack is finished (see the mirror's `HostYield.due`). The bytes are
   * the same with or without it.
   */
  async write(
    gitdir: string,
    pause?: () => Promise<void> | undefined,
  ): Promise<{ pack: string; oids: string[]; deltas: number; bytes: number } | null> {
    const entries = this.entries;
    if (entries.length === 0) return null;
    const store = this.store;
    const size = this.size;
    if (size > 0x7fffffff) throw new EntityGitError('REPO_CORRUPT', `a pack over 2 GiB is not written (${size} bytes)`);
    const between = async () => {
      const p = pause?.();
      if (p) await p;
    };
    const pack = new Uint8Array(size + 20);
    pack.set(utf8('PACK'), 0);
    const head = new DataView(pack.buffer, 0, 12);
    head.setUint32(4, 2);
    head.setUint32(8, entries.length);
    // The chunks copied in, a pause after each.
    let at = 12;
    for (const { bytes, used } of this.chunks) {
      pack.set(bytes.subarray(0, used), at);
      at += used;
      await between();
    }
    const packSum = await sliceHash(store.codec, pack.subarray(0, size), pause === undefined ? null : between);
    pack.set(fromHex(packSum), size);

    // By the first byte of the id (the fan-out), then each group sorted: the same order as one
    // sort of them all, in slices.
    const groups: Entry[][] = Array.from({ length: 256 }, () => []);
    for (const e of entries) groups[parseInt(e.oid.slice(0, 2), 16)]!.push(e);
    await between();
    const n = entries.length;
    const idx = new Uint8Array(8 + 256 * 4 + n * 28 + 40);
    const view = new DataView(idx.buffer);
    idx.set([0xff, 0x74, 0x4f, 0x63, 0, 0, 0, 2], 0);
    const names = 8 + 1024;
    const oids: string[] = [];
    let i = 0;
    let done = 0;
    for (let b = 0; b < 256; b++) {
      const group = groups[b]!.sort((x, y) => (x.oid < y.oid ? -1 : x.oid > y.oid ? 1 : 0));
      for (const e of group) {
        if (isOid(e.oid)) oids.push(e.oid);
        hexInto(e.oid, idx, names + i * 20);
        view.setUint32(names + n * 20 + i * 4, e.crc);
        view.setUint32(names + n * 24 + i * 4, e.offset);
        i++;
      }
      view.setUint32(8 + b * 4, i);
      done += group.length;
      if (done >= SLICE_ENTRIES) {
        done = 0;
        await between();
      }
    }
    idx.set(fromHex(packSum), names + n * 28);
    idx.set(fromHex(store.codec.sha1(idx.subarray(0, names + n * 28 + 20))), names + n * 28 + 20);

    const dir = joinPath(gitdir, 'objects', 'pack');
    await store.mkdirp(dir);
    const base = joinPath(dir, `pack-${packSum}`);
    await store.writeAtomic(`${base}.pack`, pack, joinPath(dir, `tmp_pack_${packSum.slice(0, 12)}`));
    await store.writeAtomic(`${base}.idx`, idx, joinPath(dir, `tmp_idx_${packSum.slice(0, 12)}`));
    return {
      pack: `${base}.pack`,
      oids,
      deltas: this.deltas,
      bytes: pack.length,
    };
  }
}
