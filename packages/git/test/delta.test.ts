import { applyDelta, applyDeltas } from '../src/pack/delta.js';
import { describe, expect, it } from 'vitest';

/** A deterministic generator of numbers in [0, n). */
function rng(seed: number): (n: number) => number {
  let x = seed >>> 0;
  return (n) => {
    x = (x * 1103515245 + 12345) >>> 0;
    return (x >>> 8) % n;
  };
}

type Op = { copy: [number, number] } | { insert: Uint8Array };

/** A size as git's delta header writes it (7 bits a byte, low first). */
function varint(n: number): number[] {
  const out: number[] = [];
  do {
    let c = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) c |= 0x80;
    out.push(c);
  } while (n > 0);
  return out;
}

/** A delta in git's format, written from `ops` here (not by the code under test). */
function encode(baseSize: number, ops: Op[]): Uint8Array {
  const targetSize = ops.reduce((s, op) => s + ('copy' in op ? op.copy[1] : op.insert.length), 0);
  const out = [...varint(baseSize), ...varint(targetSize)];
  for (const op of ops) {
    if ('insert' in op) {
      for (let i = 0; i < op.insert.length; i += 127) {
        const part = op.insert.subarray(i, i + 127);
        out.push(part.length, ...part);
      }
      continue;
    }
    let [off, len] = op.copy;
    while (len > 0) {
      const n = Math.min(len, 0x10000);
      let cmd = 0x80;
      const args: number[] = [];
      for (let k = 0; k < 4; k++) {
        const b = Math.floor(off / 2 ** (8 * k)) & 0xff;
        if (b) (cmd |= 1 << k), args.push(b);
      }
      if (n !== 0x10000)
        for (let k = 0; k < 3; k++) {
          const b = (n >> (8 * k)) & 0xff;
          if (b) (cmd |= 1 << (4 + k)), args.push(b);
        }
      out.push(cmd, ...args);
      off += n;
      len -= n;
    }
  }
  return Uint8Array.from(out);
}

/** The target `ops` describe over `base`, built directly. */
function target(base: Uint8Array, ops: Op[]): Uint8Array {
  const parts = ops.map((op) => ('copy' in op ? base.subarray(op.copy[0], op.copy[0] + op.copy[1]) : op.insert));
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), (at += p.length);
  return out;
}

/** Random edits of `base`: copies of its ranges (in order, with gaps and repeats) and inserted bytes. */
function edits(base: Uint8Array, r: (n: number) => number): Op[] {
  const ops: Op[] = [];
  const n = 1 + r(12);
  for (let k = 0; k < n; k++) {
    if (base.length > 0 && r(3) > 0) {
      const off = r(base.length);
      ops.push({ copy: [off, 1 + r(Math.min(base.length - off, 70_000))] });
    } else {
      ops.push({ insert: Uint8Array.from({ length: 1 + r(300) }, () => r(256)) });
    }
  }
  return ops;
}

const CORRUPT = expect.objectContaining({ code: 'OBJECT_CORRUPT' });

describe('delta chains', () => {
  it('a chain composed and applied once gives what applying each link in turn gives, and what the edits say', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const r = rng(seed);
      const versions = [Uint8Array.from({ length: r(100_000) }, () => r(256))];
      const deltas: Uint8Array[] = [];
      const links = 1 + r(60);
      for (let k = 0; k < links; k++) {
        const ops = edits(versions.at(-1)!, r);
        deltas.push(encode(versions.at(-1)!.length, ops));
        versions.push(target(versions.at(-1)!, ops));
      }
      // deltas[k] makes version k + 1 from version k; a chain lists the top's delta first.
      for (let top = 1; top <= links; top++) {
        const chain = deltas.slice(0, top).reverse();
        expect(Buffer.from(applyDeltas(versions[0]!, chain)).equals(Buffer.from(versions[top]!))).toBe(true);
        expect(Buffer.from(applyDelta(versions[top - 1]!, deltas[top - 1]!)).equals(Buffer.from(versions[top]!))).toBe(
          true,
        );
        // From any link in between, too.
        const from = r(top);
        expect(
          Buffer.from(applyDeltas(versions[from]!, deltas.slice(from, top).reverse())).equals(
            Buffer.from(versions[top]!),
          ),
        ).toBe(true);
      }
    }
  });

  it('a shard tree growing at its end, fifty links down, is its last version', () => {
    const enc = new TextEncoder();
    let tree = enc.encode('100644 0.json\0aaaaaaaaaaaaaaaaaaaa');
    const base = tree;
    const chain: Uint8Array[] = [];
    for (let k = 1; k <= 50; k++) {
      const entry = enc.encode(`100644 ${k}.json\0${String(k).padStart(20, 'b')}`);
      chain.unshift(encode(tree.length, [{ copy: [0, tree.length] }, { insert: entry }]));
      tree = target(tree, [{ copy: [0, tree.length] }, { insert: entry }]);
    }
    expect(Buffer.from(applyDeltas(base, chain)).toString('latin1')).toBe(Buffer.from(tree).toString('latin1'));
  });

  it('a broken chain is OBJECT_CORRUPT: links of sizes that do not meet, a base of another size, a copy past the base, a truncated delta, opcode 0', () => {
    const base = new TextEncoder().encode('0123456789');
    const d1 = encode(10, [{ copy: [0, 10] }, { insert: new TextEncoder().encode('ab') }]); // 12 bytes
    const d2 = encode(12, [{ copy: [2, 10] }]); // over d1's target
    expect(new TextDecoder().decode(applyDeltas(base, [d2, d1]))).toBe('23456789ab');
    expect(() => applyDeltas(base, [encode(11, [{ copy: [0, 11] }]), d1])).toThrow(CORRUPT);
    expect(() => applyDeltas(base.subarray(1), [d2, d1])).toThrow(CORRUPT);
    expect(() => applyDeltas(base, [encode(12, [{ copy: [5, 10] }]), d1])).toThrow(CORRUPT);
    expect(() => applyDeltas(base, [d2, d1.subarray(0, d1.length - 1)])).toThrow(CORRUPT);
    expect(() => applyDeltas(base, [d2.subarray(0, 1), d1])).toThrow(CORRUPT);
    expect(() => applyDeltas(base, [d2, Uint8Array.from([...d1, 0])])).toThrow(CORRUPT);
    // A copy's argument bytes cut off at the end of the delta.
    expect(() => applyDeltas(base, [Uint8Array.from([12, 2, 0x91, 2]), d1])).toThrow(CORRUPT);
  });
});
