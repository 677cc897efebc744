import { concatBytes } from '../bytes/concat.js';
import { sha1, sha1Stream, type Sha1Stream } from './sha1.js';
// pako 1, the version isomorphic-git uses: a browser bundle holds one copy (two would ship pako twice).
import pako from 'pako';

/**
 * Hashing and compression, swappable so Node can use node:crypto and node:zlib (measured:
 * many times cheaper per object than the pure-JS path) while the browser uses the portable defaults.
 * Object ids depend only on uncompressed bytes, so every codec gives the same ids.
 */
export interface Codec {
  /** SHA-1 of `data` as 40 lowercase hex digits. */
  sha1(data: Uint8Array): string;
  /** zlib (RFC 1950) compression, as git stores loose objects. */
  deflate(data: Uint8Array): Uint8Array;
  /**
   * The inverse of `deflate`. `size`, when given, is the length the result should have (a pack
   * entry records it): a hint for the output buffer only — the caller checks the length.
   */
  inflate(data: Uint8Array, size?: number): Uint8Array;
  /**
   * Optional: SHA-1 of the concatenation of `parts`, as {@link sha1} of it would give, without
   * making it — an object's id from its header and content. Without it they are joined first.
   */
  sha1Parts?(parts: readonly Uint8Array[]): string;
  /**
   * Optional: the zlib stream of a pack entry (any stream git inflates). Default: {@link deflate}.
   * Node's codec deflates entries up to 4 KB with one fixed-Huffman block (`fixedZlib`), which
   * spares node:zlib's setup per call; the portable codec stores such entries already.
   */
  deflatePackEntry?(data: Uint8Array): Uint8Array;
  /**
   * Optional: a SHA-1 fed in parts ({@link sha1} of them joined), so a large input (a pack) can be
   * hashed in slices with the host's event loop given a turn between them. Without it, whole.
   */
  sha1Stream?(): Sha1Stream;
}

/** SHA-1 of `parts` joined, through the codec's {@link Codec.sha1Parts} where it has one. */
export function sha1OfParts(codec: Codec, parts: readonly Uint8Array[]): string {
  return codec.sha1Parts ? codec.sha1Parts(parts) : codec.sha1(concatBytes(parts));
}

/** SHA-1 of `data` as 40 lowercase hex digits (the portable implementation). */
export const sha1Hex: (data: Uint8Array) => string = sha1;

/** Inputs up to this size are stored, not compressed, by the portable codec (see {@link storedZlib}). */
const STORED_MAX = 4096;

/** zlib's Adler-32 of `data`. */
export function adler32(data: Uint8Array): number {
  let a = 1;
  let b = 0;
  for (let i = 0; i < data.length; ) {
    // 5552 bytes at most between reductions, as zlib does: the sums cannot overflow meanwhile.
    const end = Math.min(i + 5552, data.length);
    // Sixteen bytes a step (as zlib's DO16): the loop's own cost was most of it.
    for (const end16 = end - 15; i < end16; i += 16) {
      a += data[i]!;
      b += a;
      a += data[i + 1]!;
      b += a;
      a += data[i + 2]!;
      b += a;
      a += data[i + 3]!;
      b += a;
      a += data[i + 4]!;
      b += a;
      a += data[i + 5]!;
      b += a;
      a += data[i + 6]!;
      b += a;
      a += data[i + 7]!;
      b += a;
      a += data[i + 8]!;
      b += a;
      a += data[i + 9]!;
      b += a;
      a += data[i + 10]!;
      b += a;
      a += data[i + 11]!;
      b += a;
      a += data[i + 12]!;
      b += a;
      a += data[i + 13]!;
      b += a;
      a += data[i + 14]!;
      b += a;
      a += data[i + 15]!;
      b += a;
    }
    for (; i < end; i++) {
      a += data[i]!;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/**
 * A zlib stream of stored (uncompressed) blocks: what a small loose object costs least to write.
 * pako sets up ~300 KB of deflate state per call, which costs more than compressing a few
 * kilobytes saves; git reads any valid zlib stream, and packing recompresses the object anyway.
 */
export function storedZlib(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(storedZlibLength(data.length));
  storedZlibInto(data, out, 0);
  return out;
}

/** The length of {@link storedZlib}'s stream of `n` bytes. */
export function storedZlibLength(n: number): number {
  return 2 + Math.max(1, Math.ceil(n / 65535)) * 5 + n + 4;
}

/**
 * {@link storedZlib}'s stream written into `out` at `at` (room for {@link storedZlibLength}
 * bytes), without a copy of its own: a pack writer puts it straight into the pack. Returns the end.
 */
export function storedZlibInto(data: Uint8Array, out: Uint8Array, at: number): number {
  const blocks = Math.max(1, Math.ceil(data.length / 65535));
  out[at] = 0x78; // deflate, 32 KB window
  out[at + 1] = 0x01; // no dictionary, fastest; (0x78 << 8 | 0x01) % 31 === 0
  let o = at + 2;
  for (let i = 0, b = 0; b < blocks; b++, i += 65535) {
    const len = Math.min(65535, data.length - i);
    out[o++] = b === blocks - 1 ? 1 : 0; // BFINAL, BTYPE 00 (stored)
    out[o++] = len & 0xff;
    out[o++] = len >>> 8;
    out[o++] = ~len & 0xff;
    out[o++] = (~len >>> 8) & 0xff;
    out.set(len === data.length ? data : data.subarray(i, i + len), o);
    o += len;
  }
  const sum = adler32(data);
  out[o++] = sum >>> 24;
  out[o++] = (sum >>> 16) & 0xff;
  out[o++] = (sum >>> 8) & 0xff;
  out[o++] = sum & 0xff;
  return o;
}

/** The content of a zlib stream made only of stored blocks, checked; null when it is not one. */
function unstored(data: Uint8Array): Uint8Array | null {
  if (data.length < 11 || data[0] !== 0x78 || ((data[0] << 8) | data[1]!) % 31 !== 0 || (data[1]! & 0x20) !== 0)
    return null;
  const parts: Uint8Array[] = [];
  let size = 0;
  let o = 2;
  for (;;) {
    if (o + 5 > data.length) return null;
    const head = data[o]!;
    if ((head & 0x06) !== 0) return null; // not a stored block: compressed data
    const len = data[o + 1]! | (data[o + 2]! << 8);
    const nlen = data[o + 3]! | (data[o + 4]! << 8);
    if ((len ^ 0xffff) !== nlen || o + 5 + len > data.length) return null;
    parts.push(data.subarray(o + 5, o + 5 + len));
    size += len;
    o += 5 + len;
    if (head & 1) break;
  }
  if (o + 4 > data.length) return null;
  const out = parts.length === 1 ? parts[0]!.slice() : new Uint8Array(size);
  if (parts.length > 1) {
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
  }
  const sum = ((data[o]! << 24) | (data[o + 1]! << 16) | (data[o + 2]! << 8) | data[o + 3]!) >>> 0;
  if (adler32(out) !== sum) throw new Error('the zlib stream fails its checksum');
  return out;
}

export const portableCodec: Codec = {
  sha1: sha1Hex,
  sha1Stream,
  // Small objects are stored (no compression: cheaper than pako's setup); larger ones at level 1,
  // as on Node: loose objects are short-lived (packing recompresses them), and pako's default
  // level costs several times more on message trees.
  deflate: (data) => (data.length <= STORED_MAX ? storedZlib(data) : pako.deflate(data, { level: 1 })),
  inflate: (data) => {
    const stored = unstored(data);
    if (stored !== null) return stored;
    let out: Uint8Array | undefined;
    try {
      out = pako.inflate(data) as Uint8Array | undefined;
    } catch (err) {
      // pako 1 throws zlib's message as a string.
      throw err instanceof Error ? err : new Error(`the zlib stream does not inflate: ${String(err)}`);
    }
    // pako returns undefined, not an error, for an empty or truncated stream (a torn object file).
    if (!(out instanceof Uint8Array)) throw new Error('the zlib stream is empty or truncated');
    // pako 1 also returns what it inflated from a stream cut inside its trailer. Every caller hands
    // a whole stream (a loose file, a pack entry to the next one), so its last 4 bytes are the
    // checksum of what it holds.
    const n = data.length;
    const sum = n < 6 ? -1 : ((data[n - 4]! << 24) | (data[n - 3]! << 16) | (data[n - 2]! << 8) | data[n - 1]!) >>> 0;
    if (adler32(out) !== sum) throw new Error('the zlib stream is truncated or fails its checksum');
    return out;
  },
};
