import { describe, expect, it } from 'vitest';
import { completeLines, lineValues, parseRecords } from '../src/index.js';

/** A seeded generator (xorshift32), so a failing case can be replayed from its seed. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

// Characters that trip a scanner that does not follow strings: braces, quotes, escapes, non-BMP.
const TRICKY = ['}', '{', '}{', '"', '\\', '\\"', '[', ']', ',', ':', ' ', '\n', '😀', 'é', 'x', '\u2028', '\u0000'];

function value(r: () => number, depth: number): unknown {
  const k = Math.floor(r() * (depth > 3 ? 4 : 7));
  if (k === 0)
    return Array.from({ length: Math.floor(r() * 6) }, () => TRICKY[Math.floor(r() * TRICKY.length)]).join('');
  if (k === 1) return Math.floor(r() * 2000) - 1000;
  if (k === 2) return r() < 0.5;
  if (k === 3) return null;
  if (k === 4 || k === 5) {
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(r() * 4); i > 0; i--) o[String(value(r, 4))] = value(r, depth + 1);
    return o;
  }
  return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
}

/** A record: what a transcript line holds (an object, its keys and strings full of delimiters). */
const record = (r: () => number) => ({ type: String(value(r, 4)), body: value(r, 1), n: Math.floor(r() * 100) });

describe('several JSON values on one line', () => {
  it('gives each value of records written back to back, whatever their strings hold', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const r = rng(seed);
      const records = Array.from({ length: 1 + Math.floor(r() * 4) }, () => record(r));
      const line = records.map((x) => JSON.stringify(x) + [' ', '', '\t', '  '][Math.floor(r() * 4)]).join('');
      const read = lineValues(line);
      expect({ seed, ...read }).toEqual({ seed, values: records, damage: null });
    }
  });

  it('a line cut anywhere keeps the whole values before the cut and says the next one is cut off', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const r = rng(seed);
      const records = Array.from({ length: 2 + Math.floor(r() * 2) }, () => record(r));
      const texts = records.map((x) => JSON.stringify(x));
      const line = texts.join('');
      const ends = texts.map((_, i) => texts.slice(0, i + 1).join('').length);
      for (let cut = 1; cut < line.length; cut++) {
        const read = lineValues(line.slice(0, cut));
        const whole = ends.filter((e) => e <= cut).length;
        expect(read.values).toEqual(records.slice(0, whole));
        if (ends.includes(cut)) expect(read.damage).toBeNull();
        else expect(read.damage).toMatchObject({ at: whole === 0 ? 0 : ends[whole - 1], kind: 'cut-off' });
      }
    }
  });

  it('stops at text that begins no value, keeping what came before', () => {
    expect(lineValues('{"a":1}{"b":"}{"}')).toEqual({ values: [{ a: 1 }, { b: '}{' }], damage: null });
    expect(lineValues('{"a":"\\"}"} [1,{"b":[]}] "s" 2 true null')).toEqual({
      values: [{ a: '"}' }, [1, { b: [] }], 's', 2, true, null],
      damage: null,
    });
    expect(lineValues('{"a":1} garbage {"b":2}')).toMatchObject({
      values: [{ a: 1 }],
      damage: { at: 8, kind: 'not-json' },
    });
    expect(lineValues('this is no record')).toMatchObject({ values: [], damage: { at: 0, kind: 'not-json' } });
    expect(lineValues('{"a":1}}')).toMatchObject({ values: [{ a: 1 }], damage: { at: 7, kind: 'not-json' } });
    expect(lineValues('{"a":[1}]')).toMatchObject({ values: [], damage: { at: 0, kind: 'not-json' } });
    expect(lineValues('{"a":1}{"b":')).toMatchObject({ values: [{ a: 1 }], damage: { at: 7, kind: 'cut-off' } });
    // As JSON.parse reads them: an own __proto__ key, not a prototype.
    const [proto] = lineValues('{"x":1}{"__proto__":{"p":1}}').values.slice(1) as [Record<string, unknown>];
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.keys(proto)).toEqual(['__proto__']);
  });

  it('parseRecords: each line read, damaged ones named by line and column; strict refuses the first', () => {
    const bytes = new TextEncoder().encode(
      ['{"n":1}', '{"n":2}{"n":3}', '', 'not json', '{"n":4} {"n":', '{"n":5}\r', ''].join('\n'),
    );
    const lines = completeLines(bytes);
    expect(parseRecords(lines.lines, { firstLine: 10 })).toEqual({
      records: [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }, { n: 5 }],
      warnings: [
        { line: 13, column: 1, reason: 'not-json', warning: expect.stringMatching(/^line 13 skipped: not JSON \(/) },
        { line: 14, column: 9, reason: 'cut-off', warning: 'line 14 from column 9 skipped: a record cut off' },
      ],
    });
    expect(() => parseRecords(lines.lines, { strict: true })).toThrow(
      expect.objectContaining({ code: 'TRANSCRIPT_INVALID', data: { line: 2 } }),
    );
  });

  it('a line that is not UTF-8 costs that line only', () => {
    const good = new TextEncoder().encode('{"n":1}\n');
    const bytes = new Uint8Array([...good, 0xff, 0xfe, 0x7b, 0x0a, ...good]);
    const { lines } = completeLines(bytes);
    expect(lines).toEqual(['{"n":1}', null, '{"n":1}']);
    expect(parseRecords(lines)).toEqual({
      records: [{ n: 1 }, { n: 1 }],
      warnings: [{ line: 2, column: 1, reason: 'not-utf8', warning: 'line 2 skipped: not UTF-8 text' }],
    });
    expect(() => parseRecords(lines, { strict: true })).toThrow(
      expect.objectContaining({ code: 'TRANSCRIPT_INVALID', data: { line: 2 } }),
    );
  });
});
