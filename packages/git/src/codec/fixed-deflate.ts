import { adler32, storedZlib } from './codec.js';

/**
 * Inputs up to this size are deflated by {@link fixedZlib} where a pack would call the codec:
 * a backfill pack's commits, small trees and tree deltas (a few hundred bytes each, thousands of
 * them in an import). node:zlib's per-call setup (a stream object, a native deflate state) is,
 * in a CPU profile of an import, far more than this encoder's whole cost for such an entry.
 */
export const FIXED_DEFLATE_MAX = 4096;

// Deflate's fixed Huffman code (RFC 1951, 3.2.6), each code bit-reversed: the stream is written
// least significant bit first, a Huffman code most significant bit first.
const reverse = (code: number, bits: number): number => {
  let r = 0;
  for (let i = 0; i < bits; i++) r |= ((code >>> i) & 1) << (bits - 1 - i);
  return r;
};
const LIT_CODE = new Uint16Array(288);
const LIT_BITS = new Uint8Array(288);
for (let s = 0; s < 288; s++) {
  const [base, first, bits] =
    s < 144 ? [0x30, 0, 8] : s < 256 ? [0x190, 144, 9] : s < 280 ? [0, 256, 7] : [0xc0, 280, 8];
  LIT_CODE[s] = reverse(base + s - first, bits);
  LIT_BITS[s] = bits;
}
const LENGTH_BASE = [
  3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
];
const LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [
  1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10];
/** The window: distances up to 4 KB, which the inputs never exceed (codes 0–23). */
const WINDOW = 4096;
const MAX_MATCH = 258;
// By length 3..258: the length code's index (0..28); by distance 1..4096: the distance code.
const LENGTH_CODE = new Uint8Array(MAX_MATCH + 1);
for (let c = 0; c < LENGTH_BASE.length; c++) {
  const end = c + 1 < LENGTH_BASE.length ? LENGTH_BASE[c + 1]! : MAX_MATCH + 1;
  for (let l = LENGTH_BASE[c]!; l < end; l++) LENGTH_CODE[l] = c;
}
LENGTH_CODE[MAX_MATCH] = 28;
const DIST_CODE = new Uint8Array(WINDOW + 1);
for (let c = 0; c < DIST_BASE.length; c++) {
  const end = c + 1 < DIST_BASE.length ? DIST_BASE[c + 1]! : WINDOW + 1;
  for (let d = DIST_BASE[c]!; d < end; d++) DIST_CODE[d] = c;
}
const DIST_REV = Uint8Array.from({ length: 30 }, (_, c) => reverse(c, 5));

const HASH_BITS = 12;
// Position + 1 of the last occurrence of each 3-byte hash; `stamp` tells this call's entries from
// older ones, so the table is never cleared.
const head = new Int32Array(1 << HASH_BITS);
const headStamp = new Uint32Array(1 << HASH_BITS);
let stamp = 0;

/** Where {@link fixedZlib} writes a stream (its worst case: 9 bits a literal, the block's 3 bits and its end's 7). */
const OUT = new Uint8Array(2 + Math.ceil((FIXED_DEFLATE_MAX * 9 + 10) / 8) + 4);
// The bit writer's state, module-wide: no closure made per call (a backfill makes thousands).
let bits = 0;
let count = 0;
let o = 0;

function put(value: number, width: number): void {
  bits |= value << count;
  count += width;
  while (count >= 8) {
    OUT[o++] = bits & 0xff;
    bits >>>= 8;
    count -= 8;
  }
}

const hash3 = (data: Uint8Array, i: number) =>
  Math.imul((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!, 0x9e3779b1) >>> (32 - HASH_BITS);

/**
 * A zlib stream of `data` (at most {@link FIXED_DEFLATE_MAX} bytes) as one deflate block with the
 * fixed Huffman code and greedy matches of one candidate each (what zlib's fastest levels do,
 * without the dynamic code): any inflate reads it. A stored stream when that is not longer. The
 * stream is written into a buffer of the module's and copied out at its exact size.
 */
export function fixedZlib(data: Uint8Array): Uint8Array {
  const n = data.length;
  if (n > FIXED_DEFLATE_MAX) throw new RangeError(`fixedZlib takes at most ${FIXED_DEFLATE_MAX} bytes, not ${n}`);
  OUT[0] = 0x78;
  OUT[1] = 0x01;
  o = 2;
  bits = 3; // BFINAL 1, BTYPE 01 (fixed Huffman)
  count = 3;
  if (++stamp === 0x100000000) {
    headStamp.fill(0);
    stamp = 1;
  }
  let i = 0;
  while (i < n) {
    let length = 0;
    let distance = 0;
    if (i + 2 < n) {
      const h = hash3(data, i);
      const cand = headStamp[h] === stamp ? head[h]! - 1 : -1;
      head[h] = i + 1;
      headStamp[h] = stamp;
      if (cand >= 0 && i - cand <= WINDOW) {
        const max = Math.min(MAX_MATCH, n - i);
        let l = 0;
        while (l < max && data[cand + l] === data[i + l]) l++;
        if (l >= 3) {
          length = l;
          distance = i - cand;
        }
      }
    }
    if (length === 0) {
      const s = data[i]!;
      put(LIT_CODE[s]!, LIT_BITS[s]!);
      i++;
      continue;
    }
    const lc = LENGTH_CODE[length]!;
    put(LIT_CODE[257 + lc]!, LIT_BITS[257 + lc]!);
    if (LENGTH_EXTRA[lc]! > 0) put(length - LENGTH_BASE[lc]!, LENGTH_EXTRA[lc]!);
    const dc = DIST_CODE[distance]!;
    put(DIST_REV[dc]!, 5);
    if (DIST_EXTRA[dc]! > 0) put(distance - DIST_BASE[dc]!, DIST_EXTRA[dc]!);
    // The matched positions join the table (their hashes), so later repeats find them.
    const end = Math.min(i + length, n - 2);
    for (let k = i + 1; k < end; k++) {
      const h = hash3(data, k);
      head[h] = k + 1;
      headStamp[h] = stamp;
    }
    i += length;
  }
  put(LIT_CODE[256]!, LIT_BITS[256]!); // end of block
  if (count > 0) OUT[o++] = bits & 0xff;
  // Stored blocks cost 5 bytes per 64 KB: take them when the code saved nothing.
  if (o + 4 >= 2 + 5 + n + 4) return storedZlib(data);
  const sum = adler32(data);
  OUT[o++] = sum >>> 24;
  OUT[o++] = (sum >>> 16) & 0xff;
  OUT[o++] = (sum >>> 8) & 0xff;
  OUT[o++] = sum & 0xff;
  return OUT.slice(0, o);
}
