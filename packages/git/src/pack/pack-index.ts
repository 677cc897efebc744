import { toHex } from '../bytes/hex.js';
import { joinPath } from '../storage/paths.js';
import type { Store } from '../storage/store.js';

/** Thrown for a pack this reader does not take (the caller falls back to another reader). */
export class UnsupportedPack extends Error {}

/** The version of a pack index (`\xfftOc` and a version), or null when it is not one. */
export function idxVersion(idx: Uint8Array): number | null {
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
