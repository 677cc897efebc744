// `git_history` paged over a real WebSocket: given `offset` / `limit`, the page of the branch's
// timeline (the slice of the whole one) and its turn count; bad pages are typed errors.
import { describe, expect, it } from 'vitest';
import { DEMO_SESSION } from '../src/index.js';
import { client, code, useServer } from './server-helpers.js';

useServer();

describe('git_history in pages', () => {
  it('each page is the slice of the whole timeline, with the turn count, on HEAD or a named branch', async () => {
    for (const branch of [undefined, 'main', 'retry-d-a3r']) {
      const params = { session_id: DEMO_SESSION, ...(branch ? { branch } : {}) };
      const whole = await client.call('git_history', params);
      expect('total' in whole).toBe(false);
      const n = whole.commits.length;
      for (const [offset, limit] of [
        [0, 1],
        [0, 2],
        [1, 2],
        [n - 1, 5],
        [0, 10_000],
      ] as const) {
        expect(await client.call('git_history', { ...params, offset, limit })).toEqual({
          ...whole,
          commits: whole.commits.slice(offset, offset + limit),
          total: n,
          offset,
        });
      }
      // `offset` alone: a page of the default size from there.
      expect(await client.call('git_history', { ...params, offset: 1 })).toEqual({
        ...whole,
        commits: whole.commits.slice(1),
        total: n,
        offset: 1,
      });
    }
  });

  it('bad or out-of-range pages: INVALID_ARGUMENT; an unknown session or branch as without paging', async () => {
    const s = DEMO_SESSION;
    for (const params of [
      { session_id: s, offset: -1 },
      { session_id: s, offset: 1.5 },
      { session_id: s, offset: '0' },
      { session_id: s, limit: 0 },
      { session_id: s, limit: 10_001 },
      { session_id: s, offset: 0, limit: [5] },
      { session_id: s, offset: 5, limit: 1 },
      { session_id: s, branch: 'retry-d-a3r', offset: 3, limit: 1 },
      { session_id: s, offset: Number.MAX_SAFE_INTEGER, limit: 1 },
      { offset: 0, limit: 1 },
    ])
      expect(await code(client, 'git_history', params)).toBe('INVALID_ARGUMENT');
    expect(await code(client, 'git_history', { session_id: 'ghost', offset: 0, limit: 1 })).toBe('SESSION_NOT_FOUND');
    expect(await code(client, 'git_history', { session_id: s, branch: 'nope', offset: 0, limit: 1 })).toBe(
      'BRANCH_NOT_FOUND',
    );
  });
});
