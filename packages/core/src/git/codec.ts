import { sha1 } from '@noble/hashes/legacy.js';
import { deflate as pakoDeflate, inflate as pakoInflate } from 'pako';

/**
 * Hashing and compression, swappable so Node can use node:crypto and node:zlib (measured ~30x
 * cheaper per object than the pure-JS path) while the browser uses the portable defaults.
 * Object ids depend only on uncompressed bytes, so every codec gives the same ids.
 */
export interface Codec {
  /** SHA-1 of `data` as 40 lowercase hex digits. */
  sha1(data: Uint8Array): string;
  /** zlib (RFC 1950) compression, as git stores loose objects. */
  deflate(data: Uint8Array): Uint8Array;
  /** The inverse of `deflate`. */
  inflate(data: Uint8Array): Uint8Array;
}

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += HEX[bytes[i]!];
  return s;
}

const nibble = (c: number): number => (c <= 57 ? c - 48 : (c | 32) - 87);

export function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = (nibble(hex.charCodeAt(2 * i)) << 4) | nibble(hex.charCodeAt(2 * i + 1));
  return out;
}

export function sha1Hex(data: Uint8Array): string {
  return toHex(sha1(data));
}

export const portableCodec: Codec = {
  sha1: sha1Hex,
  // Level 1, as on Node: loose objects are short-lived (packing recompresses them), and pako's
  // default level costs several times more on message trees.
  deflate: (data) => pakoDeflate(data, { level: 1 }),
  inflate: (data) => {
    const out = pakoInflate(data) as Uint8Array | undefined;
    // pako returns undefined, not an error, for an empty or truncated stream (a torn object file).
    if (!(out instanceof Uint8Array)) throw new Error('the zlib stream is empty or truncated');
    return out;
  },
};
