import { decodeId, encodeId, idSegment, messageFileName, sessionDirName, assertId } from '@entity-git/core';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HOSTILE_IDS } from '../../test-utils/src/hostile-ids.js';

describe('id escaping', () => {
  it('keeps plain ids as they are', () => {
    expect(encodeId('abc-DEF_123')).toBe('abc-DEF_123');
    expect(encodeId('msg.v2')).toBe('msg.v2');
    expect(messageFileName({ seq: 7, role: 'tool', id: 'fc_xxx' })).toBe('000007-t-fc_xxx.json');
    expect(messageFileName({ seq: 1234567, role: 'user', id: 'u' })).toBe('1234567-u-u.json');
  });

  it('escapes deterministically and reversibly', () => {
    expect(encodeId('../..')).toBe('%2E%2E%2F%2E%2E');
    expect(encodeId('.git')).toBe('%2Egit');
    expect(encodeId('x.lock')).toBe('x%2Elock');
    expect(encodeId('nul\u0000byte')).toBe('nul%00byte');
    expect(encodeId('café')).toBe('caf%C3%A9');
    for (const id of HOSTILE_IDS) expect(decodeId(encodeId(id))).toBe(id);
  });

  it('gives every hostile id a distinct, safe path segment', () => {
    const segments = HOSTILE_IDS.map(sessionDirName);
    expect(new Set(segments).size).toBe(HOSTILE_IDS.length);
    for (const s of segments) {
      expect(s).toMatch(/^[A-Za-z0-9_%+-][A-Za-z0-9._%+-]*$/);
      expect(s).not.toMatch(/^\.|\.$|\.\.|\.lock$/);
      expect(new TextEncoder().encode(s).length).toBeLessThanOrEqual(100);
    }
    // NFC and NFD spellings stay apart; so do ids differing only in case.
    expect(sessionDirName('caf\u00e9')).not.toBe(sessionDirName('cafe\u0301'));
    expect(idSegment('x'.repeat(300))).toMatch(/^x{80}\+[0-9a-f]{16}$/);
  });

  it('makes branch names native git accepts', () => {
    for (const id of HOSTILE_IDS) {
      const ref = `refs/heads/retry-${idSegment(id)}`;
      expect(execFileSync('git', ['check-ref-format', '--normalize', ref], { encoding: 'utf8' }).trim()).toBe(ref);
    }
  });

  it('refuses empty, non-string and oversized ids with INVALID_ID', () => {
    for (const bad of ['', null, 42, 'x'.repeat(1025)]) {
      expect(() => assertId(bad)).toThrow(expect.objectContaining({ code: 'INVALID_ID' }));
    }
  });
});
