/**
 * SHA-1 (FIPS 180-4) over a byte array, as 40 lowercase hex digits: the portable codec's hash.
 * Written for V8's 32-bit integer paths (an Int32Array schedule, no DataView, no per-block
 * allocation): several times faster than a general-purpose hash library's SHA-1 on git's
 * objects, which is most of the CPU a turn costs in a browser. Node uses node:crypto instead.
 */
const W = new Int32Array(80);
const H = new Int32Array(5);

function blocks(d: Uint8Array, from: number, to: number): void {
  let h0 = H[0]!;
  let h1 = H[1]!;
  let h2 = H[2]!;
  let h3 = H[3]!;
  let h4 = H[4]!;
  for (let o = from; o < to; o += 64) {
    for (let i = 0; i < 16; i++) {
      const k = o + 4 * i;
      W[i] = (d[k]! << 24) | (d[k + 1]! << 16) | (d[k + 2]! << 8) | d[k + 3]!;
    }
    for (let i = 16; i < 80; i++) {
      const x = W[i - 3]! ^ W[i - 8]! ^ W[i - 14]! ^ W[i - 16]!;
      W[i] = (x << 1) | (x >>> 31);
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let e = h4;
    let dd = h3;
    let i = 0;
    for (; i < 20; i++) {
      const t = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & dd)) + e + W[i]! + 0x5a827999) | 0;
      e = dd;
      dd = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = t;
    }
    for (; i < 40; i++) {
      const t = (((a << 5) | (a >>> 27)) + (b ^ c ^ dd) + e + W[i]! + 0x6ed9eba1) | 0;
      e = dd;
      dd = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = t;
    }
    for (; i < 60; i++) {
      const t = (((a << 5) | (a >>> 27)) + ((b & c) | (b & dd) | (c & dd)) + e + W[i]! - 0x70e44324) | 0;
      e = dd;
      dd = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = t;
    }
    for (; i < 80; i++) {
      const t = (((a << 5) | (a >>> 27)) + (b ^ c ^ dd) + e + W[i]! - 0x359d3e2a) | 0;
      e = dd;
      dd = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = t;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + dd) | 0;
    h4 = (h4 + e) | 0;
  }
  H[0] = h0;
  H[1] = h1;
  H[2] = h2;
  H[3] = h3;
  H[4] = h4;
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const word = (w: number) => HEX[(w >>> 24) & 255]! + HEX[(w >>> 16) & 255]! + HEX[(w >>> 8) & 255]! + HEX[w & 255]!;

/**
 * The hash of a message whose last `rest.length` bytes are `rest` (fewer than 64) and whose
 * length is `len`, its blocks before them already run into {@link H}: 0x80, zeros, and the
 * length in bits (64-bit big-endian) — one or two blocks — then the hex of H.
 */
function finish(rest: Uint8Array, len: number): string {
  const tail = new Uint8Array(rest.length < 56 ? 64 : 128);
  tail.set(rest, 0);
  tail[rest.length] = 0x80;
  const end = tail.length;
  const hi = Math.floor(len / 0x20000000);
  const lo = (len * 8) >>> 0;
  tail[end - 8] = hi >>> 24;
  tail[end - 7] = (hi >>> 16) & 255;
  tail[end - 6] = (hi >>> 8) & 255;
  tail[end - 5] = hi & 255;
  tail[end - 4] = lo >>> 24;
  tail[end - 3] = (lo >>> 16) & 255;
  tail[end - 2] = (lo >>> 8) & 255;
  tail[end - 1] = lo & 255;
  blocks(tail, 0, end);
  return word(H[0]!) + word(H[1]!) + word(H[2]!) + word(H[3]!) + word(H[4]!);
}

const INITIAL = Int32Array.of(0x67452301, 0xefcdab89 | 0, 0x98badcfe | 0, 0x10325476, 0xc3d2e1f0 | 0);

export function sha1(data: Uint8Array): string {
  H.set(INITIAL);
  const len = data.length;
  const full = len - (len % 64);
  blocks(data, 0, full);
  return finish(data.subarray(full), len);
}

/** SHA-1 fed in parts, as {@link sha1} of them joined would give. */
export interface Sha1Stream {
  update(data: Uint8Array): void;
  /** The hash, as 40 lowercase hex digits; the stream is done after it. */
  digest(): string;
}

/** The portable {@link Sha1Stream}: a large input hashed in slices (a pack, between host turns). */
export function sha1Stream(): Sha1Stream {
  const h = INITIAL.slice();
  const pending = new Uint8Array(64);
  let held = 0;
  let length = 0;
  const run = (d: Uint8Array, from: number, to: number) => {
    H.set(h);
    blocks(d, from, to);
    h.set(H);
  };
  return {
    update(data) {
      length += data.length;
      let i = 0;
      if (held > 0) {
        i = Math.min(64 - held, data.length);
        pending.set(data.subarray(0, i), held);
        held += i;
        if (held < 64) return;
        run(pending, 0, 64);
        held = 0;
      }
      const full = i + Math.floor((data.length - i) / 64) * 64;
      run(data, i, full);
      pending.set(data.subarray(full), 0);
      held = data.length - full;
    },
    digest() {
      H.set(h);
      return finish(pending.subarray(0, held), length);
    },
  };
}
