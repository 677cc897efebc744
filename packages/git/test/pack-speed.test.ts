// The import's fast paths (issue 21's bench): the fixed-Huffman deflate of small pack entries,
// and a flat tree extended in the buffer of the one before it.
import { deflateSync, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { portableCodec, storedZlib } from '../src/codec/codec.js';
import { FIXED_DEFLATE_MAX, fixedZlib } from '../src/codec/fixed-deflate.js';
import { buildTree, extendTree, type TreeEntry } from '../src/objects/tree.js';
import { prefixSuffixDelta } from '../src/pack/delta.js';
import { applyDelta } from '../src/pack/delta.js';

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

describe('extendTree', () => {
  const entry = (i: number): TreeEntry => ({
    mode: '100644',
    name: `${String(i).padStart(6, '0')}-user.json`,
    oid: i.toString(16).padStart(40, '0'),
  });

  it('gives the bytes buildTree gives, and never writes over a tree it handed out', () => {
    const entries = Array.from({ length: 400 }, (_, i) => entry(i));
    let tree = new Uint8Array(0);
    const kept: { bytes: Uint8Array; copy: Buffer }[] = [];
    for (let n = 5; n <= 300; n += 5) {
      tree = extendTree(tree, entries.slice(0, n), n - 5)!;
      expect(Buffer.from(tree).equals(Buffer.from(buildTree(entries.slice(0, n))))).toBe(true);
      kept.push({ bytes: tree, copy: Buffer.from(tree) });
    }
    // Two extensions of one tree (a branch forking), of an older tree and of the newest: the
    // second does not touch the first.
    for (const n of [155, 300]) {
      const base = kept[n / 5 - 1]!.bytes;
      const a = extendTree(base, entries.slice(0, n + 5), n)!;
      const aCopy = Buffer.from(a);
      const b = extendTree(base, [...entries.slice(0, n), entry(399)], n)!;
      expect(aCopy.equals(Buffer.from(buildTree(entries.slice(0, n + 5))))).toBe(true);
      expect(Buffer.from(a).equals(aCopy)).toBe(true);
      expect(Buffer.from(b).equals(Buffer.from(buildTree([...entries.slice(0, n), entry(399)])))).toBe(true);
    }
    for (const k of kept) expect(Buffer.from(k.bytes).equals(k.copy)).toBe(true);
  });

  it('a tree extended in place is a delta of the one before it, as when copied', () => {
    const entries = Array.from({ length: 300 }, (_, i) => entry(i));
    const before = extendTree(new Uint8Array(0), entries.slice(0, 200), 0)!;
    const after = extendTree(before, entries.slice(0, 203), 200)!;
    expect(after.buffer).toBe(before.buffer);
    const delta = prefixSuffixDelta(before, after)!;
    expect(delta).toEqual(prefixSuffixDelta(before.slice(), after.slice()));
    expect(Buffer.from(applyDelta(before, delta)).equals(Buffer.from(after))).toBe(true);
  });
});
