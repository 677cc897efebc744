import { foldLine } from '@entity-git/core';
import { describe, expect, it } from 'vitest';
import { foldLine as foldLineBefore } from './reference/text-before.js';

// foldLine folds in one pass now; its output must stay what the regex chain it replaced gave
// (reference/text-before.ts, the implementation as it was), character for character.

/** xorshift32: the same inputs on every run. */
function random(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

// Pieces a text is made of: words, every kind of whitespace and control, pairs, lone halves,
// combining marks, CRLF, long words.
const PIECES = [
  'a',
  'word',
  'lorem ipsum',
  'x'.repeat(90),
  'y'.repeat(1700),
  ' ',
  '  ',
  '\t',
  '\n',
  '\r\n',
  '\u000b',
  '\u000c',
  '\u0000',
  '\u001f',
  '\u007f',
  '\u0085',
  '\u009f',
  '\u00a0',
  '\u00a1',
  '\u1680',
  '\u2000',
  '\u200a',
  '\u200b',
  '\u2028',
  '\u2029',
  '\u202f',
  '\u205f',
  '\u3000',
  '\ufeff',
  '\ufffd',
  '\ue000',
  '\uffff',
  '😀',
  '𝄞',
  '👩‍💻',
  'e\u0301',
  '\u0301',
  '\u0308\u0308',
  '你好',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\ud83d',
  '\ude00',
];

function text(r: (n: number) => number): string {
  let t = '';
  const parts = r(6) === 0 ? r(400) : r(40);
  for (let i = 0; i < parts; i++) t += PIECES[r(PIECES.length)];
  return t;
}

describe('foldLine (one pass) against the regex chain it replaced', () => {
  it('folds 40,000 random texts alike, at widths 0, 1, 2, 40, 60 and 80', () => {
    const r = random(0x5eed);
    for (let k = 0; k < 40_000; k++) {
      const t = text(r);
      for (const max of [0, 1, 2, 40, 60, 80]) {
        const got = foldLine(t, max);
        if (got !== foldLineBefore(t, max)) expect({ t, max, got }).toEqual({ t, max, got: foldLineBefore(t, max) });
      }
    }
  });

  it('treats every BMP code unit alone and between words alike', () => {
    for (let c = 0; c <= 0xffff; c++) {
      const ch = String.fromCharCode(c);
      for (const t of [ch, `a${ch}b`, `${ch}${ch}x`, `x ${ch} `, `\ud83d${ch}`, `${ch}\ude00`]) {
        for (const max of [1, 2, 3, 80]) {
          const got = foldLine(t, max);
          if (got !== foldLineBefore(t, max))
            expect({ c, t, max, got }).toEqual({ c, t, max, got: foldLineBefore(t, max) });
        }
      }
    }
  });

  it('cuts where the bounded head ends, a pair split by the bound included', () => {
    const r = random(7);
    for (let k = 0; k < 2000; k++) {
      const max = 1 + r(90);
      const bound = max * 8 + 1024;
      const lead = ' '.repeat(bound - 1 - r(6));
      for (const tail of ['😀😀', 'a😀', '\ud83d', 'x y z', `${'w '.repeat(50)}`]) {
        const t = lead + tail + text(r);
        expect(foldLine(t, max)).toBe(foldLineBefore(t, max));
      }
    }
  });

  it('keeps a line of exactly max code points, pairs counted once', () => {
    for (const t of [
      '😀'.repeat(80),
      `${'😀'.repeat(79)} `,
      `${'😀'.repeat(79)} a`,
      `${'a'.repeat(79)} b`,
      `${'a'.repeat(80)} b`,
    ]) {
      expect(foldLine(t, 80)).toBe(foldLineBefore(t, 80));
    }
  });
});
