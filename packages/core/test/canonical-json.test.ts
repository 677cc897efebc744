import { canonicalJson, canonicalJsonBytes, assertJson } from '@entity-git/core';
import { describe, expect, it } from 'vitest';

describe('canonicalJson', () => {
  it('sorts keys by code point, indents by two spaces, ends with one LF', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'x'], c: {}, d: [] })).toBe(
      '{\n  "a": [\n    true,\n    null,\n    "x"\n  ],\n  "b": 1,\n  "c": {},\n  "d": []\n}\n',
    );
    // U+FF5E sorts before U+1F600 by code point (UTF-16 order would put the emoji first).
    expect(canonicalJson({ '😀': 1, '～': 2, Z: 3, a: 4 })).toBe('{\n  "Z": 3,\n  "a": 4,\n  "～": 2,\n  "😀": 1\n}\n');
  });

  it('keeps UTF-8 text readable and escapes only what JSON must', () => {
    expect(canonicalJson('你好 🙂\n\t"\\\u0000')).toBe('"你好 🙂\\n\\t\\"\\\\\\u0000"\n');
    expect(canonicalJson('\ud800')).toBe('"\\ud800"\n');
    expect(canonicalJson(-0)).toBe('0\n');
    expect(canonicalJson(1779500000.25)).toBe('1779500000.25\n');
  });

  it('pins the hard cases byte for byte: numbers, nested empties, integer-like keys, lone surrogates', () => {
    expect(canonicalJson({ zero: -0, big: 1e21, small: 5e-324, max: Number.MAX_SAFE_INTEGER + 2 })).toBe(
      '{\n  "big": 1e+21,\n  "max": 9007199254740992,\n  "small": 5e-324,\n  "zero": 0\n}\n',
    );
    expect(canonicalJson({ nested: [[], {}, [{}], { a: [] }], empty: {} })).toBe(
      '{\n  "empty": {},\n  "nested": [\n    [],\n    {},\n    [\n      {}\n    ],\n    {\n      "a": []\n    }\n  ]\n}\n',
    );
    // By code point, "10" before "9", where the engine lists integer-like keys numerically.
    expect(canonicalJson({ 9: 'nine', 10: 'ten', b: 1 })).toBe('{\n  "10": "ten",\n  "9": "nine",\n  "b": 1\n}\n');
    expect(canonicalJson({ trail: '\udc00x', lone: '\ud800', pair: '\ud83d\ude00' })).toBe(
      '{\n  "lone": "\\ud800",\n  "pair": "😀",\n  "trail": "\\udc00x"\n}\n',
    );
    const proto = JSON.parse('{"__proto__": 1, "a": 2}');
    expect(canonicalJson(proto)).toBe('{\n  "__proto__": 1,\n  "a": 2\n}\n');
  });

  it.each([
    ['NaN', { a: NaN }, '$.a'],
    ['Infinity', [1, Infinity], '$[1]'],
    ['-Infinity', -Infinity, '$'],
    ['BigInt', { n: 1n }, '$.n'],
    ['a function', { f: () => 1 }, '$.f'],
    ['undefined', { u: undefined }, '$.u'],
    ['a symbol', Symbol('x'), '$'],
    ['a Date', { d: new Date(0) }, '$.d'],
    ['a Map', new Map(), '$'],
    // biome-ignore lint/suspicious/noSparseArray: the hole is what this case tests
    ['a sparse array', [1, , 3], '$[1]'],
  ])('rejects %s with NON_JSON_VALUE', (_what, value, path) => {
    expect(() => canonicalJson(value)).toThrow(expect.objectContaining({ code: 'NON_JSON_VALUE', data: { path } }));
  });

  it('rejects cycles but not shared references', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => assertJson(a)).toThrow(expect.objectContaining({ code: 'NON_JSON_VALUE' }));
    const shared = { x: 1 };
    expect(canonicalJson({ p: shared, q: shared })).toBe(
      '{\n  "p": {\n    "x": 1\n  },\n  "q": {\n    "x": 1\n  }\n}\n',
    );
  });
});

describe('canonicalJsonBytes', () => {
  const utf8 = (s: string) => new TextEncoder().encode(s);
  const big = (unit: string, n: number) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  it('is byte for byte the UTF-8 of canonicalJson, with large strings cut anywhere, pairs and lone surrogates included', () => {
    const cases: unknown[] = [
      { a: 1, b: [true, null, 'x'], c: { z: '', y: -0 } },
      'plain',
      // A surrogate pair across every slice boundary near 65,536 code units.
      ...[65_534, 65_535, 65_536, 65_537].map((n) => ({ content: `${'a'.repeat(n)}🙂${'b'.repeat(70_000)}` })),
      {
        content: big('\ud800x\udc00"\\\n\t\u0001é中', 200_000),
        metadata: { tool: 'read', lines: [big('🙂', 70_000), 'short'] },
      },
      [big('\udbff', 65_537), big('\udc00', 65_537)],
      { nested: [[{ deep: big('q"', 131_073) }]], empty: {}, list: [] },
    ];
    for (const value of cases) {
      const expected = utf8(canonicalJson(value));
      expect(Buffer.from(canonicalJsonBytes(value)).equals(Buffer.from(expected))).toBe(true);
      const framed = canonicalJsonBytes(value, (n) => `blob ${n}\0`);
      expect(Buffer.from(framed).equals(Buffer.concat([Buffer.from(`blob ${expected.length}\0`), expected]))).toBe(
        true,
      );
    }
  });

  it('writes strings that look like its stand-ins for large strings as themselves', () => {
    const bigText = big('x', 70_000);
    const cases: unknown[] = [
      // Values starting with NUL (a stand-in is NUL and an index), keys exactly like a stand-in.
      { a: '\u00000', b: ['\u00001', bigText], '\u00000': bigText, '\u00001': '\u00000' },
      // A stand-in's text after an escaped quote, inside a key and inside a value.
      { 'k"\u00000': 'v"\u00000', c: bigText, d: '\\"\u00000' },
      // Integer-like keys (a Proxy lists them by code point) holding large strings.
      { 10: bigText, 9: '\u00000', b: [bigText, bigText] },
      '\u0000',
      bigText,
    ];
    for (const value of cases) {
      const text = canonicalJson(value);
      expect(Buffer.from(canonicalJsonBytes(value)).toString('utf8')).toBe(text);
      expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
    }
    expect(canonicalJson({ 10: 1, 9: 2 })).toBe('{\n  "10": 1,\n  "9": 2\n}\n');
  });

  it('walks deep values and names the path of a cycle deep inside', () => {
    let deep: unknown = 'end';
    for (let i = 0; i < 1000; i++) deep = i % 2 ? [deep] : { k: deep };
    const shared = { s: deep };
    // One key per object: canonical JSON is what JSON.stringify writes.
    expect(canonicalJson([shared, shared])).toBe(`${JSON.stringify([shared, shared], null, 2)}\n`);
    const ring: Record<string, unknown> = { a: [{}] };
    ((ring.a as unknown[])[0] as Record<string, unknown>).back = ring;
    expect(() => canonicalJsonBytes({ top: ring })).toThrow(
      expect.objectContaining({ code: 'NON_JSON_VALUE', data: { path: '$.top.a[0].back' } }),
    );
    const list = Object.assign([1, 2], { toJSON: () => 'not me' });
    expect(canonicalJson({ list })).toBe('{\n  "list": [\n    1,\n    2\n  ]\n}\n');
  });

  it('rejects what canonicalJson rejects, with the same code', () => {
    for (const bad of [{ x: NaN }, { y: [1, undefined] }, { z: 10n }, new Date(0)]) {
      expect(() => canonicalJsonBytes(bad)).toThrow(expect.objectContaining({ code: 'NON_JSON_VALUE' }));
    }
  });
});
