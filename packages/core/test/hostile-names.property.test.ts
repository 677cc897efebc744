// Generated hostile ids against the name escaping: every id a store may hold becomes one safe path
// segment and ref component inside the root, distinct ids stay distinct, and anything else is a
// typed INVALID_ID — never another throw.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  assertId,
  decodeId,
  EntityGitError,
  encodeId,
  idSegment,
  isEntityGitError,
  MAX_SEGMENT_BYTES,
  messageFileName,
  sessionDirName,
} from '../src/index.js';

const RUNS = { numRuns: 300 };
/** Ids as users' tables hold them: any UTF-16, path and ref syntax weighted in. */
const hostileId = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({
    unit: fc.constantFrom('.', '/', '\\', '%', ':', '~', '^', '@', '{', '\0', 'a', 'lock', '..', ' '),
    maxLength: 30,
  }),
  fc.string({ unit: 'grapheme', minLength: 90, maxLength: 400 }),
);
/** One component of a path or a git ref that can escape nothing and that git accepts. */
const SAFE_SEGMENT = /^(?!\.)(?!.*\.\.)(?!.*\.lock$)(?!.*\.$)[A-Za-z0-9_.%+-]+$/;

describe('name escaping, generated', () => {
  it('assertId: a string id passes or is INVALID_ID; any other value is INVALID_ID', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        try {
          assertId(value);
          expect(typeof value).toBe('string');
        } catch (err) {
          expect(isEntityGitError(err, 'INVALID_ID')).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it('every accepted id gives one safe segment (no separator, no dot-dot, no .lock), file names too', () => {
    fc.assert(
      fc.property(hostileId, fc.nat({ max: 999_999 }), (id, seq) => {
        try {
          assertId(id);
        } catch (err) {
          expect(err).toBeInstanceOf(EntityGitError);
          return;
        }
        for (const segment of [idSegment(id), sessionDirName(id)]) {
          expect(segment).toMatch(SAFE_SEGMENT);
          expect(segment.length).toBeLessThanOrEqual(MAX_SEGMENT_BYTES);
        }
        expect(messageFileName({ seq, role: 'user', id })).toMatch(/^\d{6}-u-[A-Za-z0-9_.%+-]+\.json$/);
      }),
      RUNS,
    );
  });

  it('encodeId is reversible on well-formed text, so distinct ids never share a file', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 60 }),
        fc.string({ unit: 'grapheme', maxLength: 60 }),
        (a, b) => {
          expect(decodeId(encodeId(a))).toBe(a);
          if (a !== b) expect(encodeId(a)).not.toBe(encodeId(b));
        },
      ),
      RUNS,
    );
  });
});
