import { describe, expect, it } from 'vitest';
import { readingFingerprint } from '../src/markers/content-markers.js';

const tables = { sessions: 'chats', nodes: 'messages' } as unknown as Parameters<typeof readingFingerprint>[1];

describe('readingFingerprint', () => {
  it('is the same for the same configuration with its keys in another order', () => {
    const a = readingFingerprint('sqlite', tables, {
      role: { column: 'kind', map: { human: 'user', ai: 'assistant' } },
      seq: 'id',
    });
    const b = readingFingerprint('sqlite', tables, {
      seq: 'id',
      role: { map: { ai: 'assistant', human: 'user' }, column: 'kind' },
    });
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(b).toBe(a);
  });

  it('differs when anything that decides the nodes differs', () => {
    const base = readingFingerprint('sqlite', tables, { seq: 'id' });
    expect(readingFingerprint('postgres', tables, { seq: 'id' })).not.toBe(base);
    expect(readingFingerprint('sqlite', tables, { seq: 'created_at' })).not.toBe(base);
  });
});
