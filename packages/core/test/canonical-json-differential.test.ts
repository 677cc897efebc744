import { assertJson, canonicalJson, canonicalJsonBytes } from '@entity-git/core';
import { describe, expect, it } from 'vitest';
import {
  assertJson as assertJsonBefore,
  canonicalJson as canonicalJsonBefore,
  canonicalJsonBytes as canonicalJsonBytesBefore,
} from './reference/canonical-json-before.js';

// Canonical JSON is written by the engine's JSON.stringify now when the value allows it; its
// bytes must stay what the walk it replaced gave (reference/canonical-json-before.ts, the
// implementation as it was), and what it rejects must be rejected alike.

function random(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

// Keys that sort differently by UTF-16 unit and by code point, integer-like keys (the engine
// lists them first), `__proto__`, lone surrogates, the empty key.
const KEYS = [
  'a',
  'b',
  'B',
  'role',
  'content',
  'metadata',
  'id',
  'Z',
  '',
  ' ',
  '$x',
  '!',
  '"',
  '\\',
  '\n',
  '0',
  '1',
  '2',
  '9',
  '10',
  '01',
  '-1',
  '4294967294',
  '4294967295',
  '1.5',
  '__proto__',
  'constructor',
  'toString',
  'é',
  'e\u0301',
  '～',
  '\uffff',
  '\ue000',
  '😀',
  '𝄞',
  '\ud800',
  '\udc00',
  '\ud83dx',
  'a\ud800',
  'aa',
  'ab',
  'a😀',
  'a～',
];
const STRINGS = [
  '',
  'x',
  'lorem ipsum',
  '"quoted"\\',
  '\u0000\u001f\u007f',
  '\n\r\t',
  '😀',
  '\ud800',
  '\udfff',
  '你好',
  'e\u0301',
  '\u2028\u2029',
];
const NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.1,
  1e21,
  1e-7,
  2 ** 53,
  -(2 ** 53) - 2,
  1779500000.25,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
];

function value(r: (n: number) => number, depth: number): unknown {
  const kind = r(depth > 5 ? 4 : 7);
  if (kind === 0) return STRINGS[r(STRINGS.length)]! + (r(4) === 0 ? 'y'.repeat(r(3000)) : '');
  if (kind === 1) return NUMBERS[r(NUMBERS.length)];
  if (kind === 2) return [true, false, null][r(3)];
  if (kind === 3) return r(2) === 0 ? [] : {};
  if (kind === 4) return Array.from({ length: r(5) }, () => value(r, depth + 1));
  const o: Record<string, unknown> = r(8) === 0 ? Object.create(null) : {};
  for (let i = r(7); i > 0; i--) {
    const k = KEYS[r(KEYS.length)]!;
    Object.defineProperty(o, k, { value: value(r, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return o;
}

const same = (v: unknown) => {
  const prefix = (n: number) => `blob ${n}\0`;
  expect(canonicalJson(v)).toBe(canonicalJsonBefore(v));
  expect(Buffer.from(canonicalJsonBytes(v, prefix)).equals(Buffer.from(canonicalJsonBytesBefore(v, prefix)))).toBe(
    true,
  );
  expect(Buffer.from(canonicalJsonBytes(v)).equals(Buffer.from(canonicalJsonBytesBefore(v)))).toBe(true);
  assertJson(v);
};

describe('canonical JSON (engine fast path) against the walk it replaced', () => {
  it('writes 20,000 random values byte for byte alike', () => {
    const r = random(0x5eed);
    for (let k = 0; k < 20_000; k++) same(value(r, 0));
  });

  it('writes objects of a repeated shape alike, whose key order is worked out once (nodes, nested, rejected ones)', () => {
    const r = random(0xc0de);
    for (let k = 0; k < 3_000; k++) {
      const node = {
        id: `n${k}`,
        session_id: 's',
        seq: k + 1,
        role: 'user',
        content: r(3) === 0 ? { type: 'text', text: `t${k}`, annotations: [{ z: 1, a: k }] } : `text ${k}`,
        predecessor: k === 0 ? null : `n${k - 1}`,
        caller: null,
        created_at: 1_700_000_000 + k / 7,
        metadata: r(4) === 0 ? { usage: { total_tokens: k, input: 2 }, pending: false } : null,
      };
      same(node);
      // The same shape holding what JSON cannot: rejected alike, whichever key holds it.
      if (k % 500 === 0) {
        for (const bad of [undefined, Number.NaN, () => 1, Symbol('s')]) {
          const wrong: Record<string, unknown> = { ...node, metadata: { usage: { total_tokens: bad, input: 2 } } };
          expect(() => canonicalJson(wrong)).toThrow();
          expect(() => canonicalJsonBefore(wrong)).toThrow();
        }
      }
    }
  });

  it('sorts every pair of keys alike, integer-like keys and __proto__ included', () => {
    for (const a of KEYS)
      for (const b of KEYS) {
        const o: Record<string, unknown> = {};
        Object.defineProperty(o, a, { value: 1, enumerable: true, writable: true, configurable: true });
        Object.defineProperty(o, b, { value: 2, enumerable: true, writable: true, configurable: true });
        o.m = { [b]: [a], [a]: { [a]: b } };
        same(o);
      }
  });

  it('writes large strings, deep nesting and shared (not cyclic) values alike', () => {
    const big = `${'😀'.repeat(40_000)}\ud800${'"'.repeat(70_000)}`;
    same({ content: big, b: [big, 'x'] });
    same({ text: 'z'.repeat(65_535), more: 'q'.repeat(65_536) });
    let deep: unknown = 'leaf';
    for (let i = 0; i < 450; i++) deep = i % 2 === 0 ? [deep] : { k: deep };
    same(deep);
    const shared = { a: 1 };
    same({ x: shared, y: [shared, shared] });
    same({ toJSON: 'not a function', a: 1 });
    same(Object.assign([1, 2], { extra: 3 }));
  });

  it.each([
    ['NaN', { a: [{ b: NaN }] }],
    ['undefined', { z: 1, a: undefined }],
    ['a function', [{ toJSON: () => 1 }]],
    ['a Date', { d: new Date(0) }],
    ['a class', { c: new (class Foo {})() }],
    ['a BigInt', { n: 1n }],
    ['a symbol key', { [Symbol('s')]: 1 }],
    // biome-ignore lint/suspicious/noSparseArray: the hole is what this case tests
    ['a hole', [1, , 3]],
    ['a big string then NaN', { a: 'x'.repeat(70_000), b: NaN }],
  ])('rejects %s alike', (_, v) => {
    const before = (() => {
      try {
        canonicalJsonBefore(v);
      } catch (e) {
        return e as Error & { code: string };
      }
    })();
    expect(before?.code).toBe('NON_JSON_VALUE');
    expect(() => canonicalJson(v)).toThrow(before!.message);
    expect(() => canonicalJsonBytes(v)).toThrow(before!.message);
    const asserted = (() => {
      try {
        assertJsonBefore(v, 'content');
      } catch (e) {
        return e as Error;
      }
    })();
    expect(() => assertJson(v, 'content')).toThrow(asserted!.message);
  });

  it('rejects a cycle alike, deep or shallow', () => {
    const o: Record<string, unknown> = { a: 1 };
    o.self = { again: [o] };
    expect(() => canonicalJson(o)).toThrow('$.self.again[0] is a cycle');
    expect(() => canonicalJsonBytes(o)).toThrow('$.self.again[0] is a cycle');
    expect(() => assertJson(o, 'metadata')).toThrow('metadata.self.again[0] is a cycle');
  });
});
