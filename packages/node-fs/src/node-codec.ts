import { createHash, hash } from 'node:crypto';
import { deflateSync, inflateSync } from 'node:zlib';
import { type Codec, FIXED_DEFLATE_MAX, fixedZlib } from '@entity-git/git';

/** A size hint above this is not trusted for a buffer (a corrupt entry could claim gigabytes). */
const INFLATE_HINT_MAX = 64 << 20;

/**
 * Level 1, with zlib's window and hash table sized to the input and an output buffer of about its
 * size. zlib's default state is about 256 KB, allocated and freed for every object, which a CPU
 * profile of a backfill showed as much of the time inside deflate. The compressed data is the
 * default's byte for byte (tested); only the header's window size differs, which readers take.
 */
function deflateOptions(length: number): { level: number; windowBits: number; memLevel: number; chunkSize: number } {
  const windowBits = Math.max(9, Math.min(15, Math.ceil(Math.log2(length + 262))));
  return {
    level: 1,
    windowBits,
    memLevel: Math.max(1, Math.min(8, windowBits - 6)),
    chunkSize: Math.max(64, Math.min(length + 64, 64 * 1024)),
  };
}

export const nodeCodec: Codec = Object.freeze({
  // One call, no Hash object: a backfill hashes every node and object (Node 20.12 on).
  sha1: (data: Uint8Array) => hash('sha1', data, 'hex'),
  // Level 1: loose objects are short-lived (packing recompresses them); measured: several times cheaper
  // than the default level on message trees for a few percent more bytes.
  deflate: (data: Uint8Array) => deflateSync(data, deflateOptions(data.length)),
  // With the size known (a pack entry's), the output buffer is that size: by default zlib's is
  // 16 KB, which a small blob's result keeps alive (measured: most of a replay's garbage).
  inflate: (data: Uint8Array, size?: number) =>
    inflateSync(
      data,
      size !== undefined && size < INFLATE_HINT_MAX ? { chunkSize: Math.max(64, size + 1) } : undefined,
    ),
  // A pack's small entries (commits, root trees, tree deltas: thousands in an import) as one
  // fixed-Huffman block each: node:zlib's setup per call costs far more than this encoder in a CPU
  // profile of an import (any inflate reads it; the pack is slightly larger).
  deflatePackEntry: (data: Uint8Array) =>
    data.length <= FIXED_DEFLATE_MAX ? fixedZlib(data) : deflateSync(data, deflateOptions(data.length)),
  sha1Stream: () => {
    const h = createHash('sha1');
    return { update: (data: Uint8Array) => void h.update(data), digest: () => h.digest('hex') };
  },
  sha1Parts: (parts: readonly Uint8Array[]) => {
    const h = createHash('sha1');
    for (const p of parts) h.update(p);
    return h.digest('hex');
  },
});
