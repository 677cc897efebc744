// The import's fast paths (issue 21's bench): the fixed-Huffman deflate of small pack entries,
// and (below) a flat tree extended in the buffer of the one before it.
import { deflateSync, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { portableCodec, storedZlib } from '../src/codec/codec.js';
import { FIXED_DEFLATE_MAX, fixedZlib } from '../src/codec/fixed-deflate.js';

function rng(seed: number): (n: number) => number {
  let x = seed >>> 0;
  return (n) => {
    x = (x * 1103515245 + 12345) >>> 0;
    return (x >>> 8) % n;
  };
}

/** Inputs of every kind a pack deflates: noise, a small alphabet, commit- and tree-like text, runs. */
function inputs(): Uint8Array[] {
  const r = rng(21);
  const words = [
    'tree ',
    'parent ',
    'author entity-git <e@x> 1700000000 +0000\n',
    'lorem ',
    '\0',
    '100644 ',
    'é',
    '😀',
  ];
  const out: Uint8Array[] = [];
  for (const n of [0, 1, 2, 3, 4, 5, 17, 258, 259, 300, 1000, 3000, 4095, FIXED_DEFLATE_MAX]) {
    out.push(Uint8Array.from({ length: n }, () => r(256)));
    out.push(Uint8Array.from({ length: n }, () => 97 + r(3)));
    out.push(new Uint8Array(n).fill(120));
    let text = '';
    while (text.length < n) text += words[r(words.length)];
    out.push(new TextEncoder().encode(text).subarray(0, n));
  }
  return out;
}

describe('fixedZlib', () => {
  it('writes zlib streams node:zlib and the portable codec read back, never longer than stored', () => {
    for (const data of inputs()) {
      const z = fixedZlib(data);
      expect(Buffer.from(inflateSync(z)).equals(Buffer.from(data)), `${data.length} bytes`).toBe(true);
      expect(Buffer.from(portableCodec.inflate(z)).equals(Buffer.from(data))).toBe(true);
      expect(z.length).toBeLessThanOrEqual(storedZlib(data).length);
    }
  });

  it('compresses text to within a third of zlib level 1, and refuses more than its maximum', () => {
    const text = new TextEncoder().encode(
      'tree 3f2a\nparent 9b1c\nauthor entity-git <entity-git@localhost> 1700000000 +0000\n'.repeat(40),
    );
    const data = text.subarray(0, FIXED_DEFLATE_MAX);
    expect(fixedZlib(data).length).toBeLessThan((deflateSync(data, { level: 1 }).length * 4) / 3 + 16);
    expect(() => fixedZlib(new Uint8Array(FIXED_DEFLATE_MAX + 1))).toThrow(RangeError);
  });
});
