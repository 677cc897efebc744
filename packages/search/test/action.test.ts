import { MemoryDag, createActions } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { writeGolden } from '@entity-git/test-utils';
import { describe, expect, it } from 'vitest';
import { SearchIndex } from '../src/index.js';
import { tempDir } from './helpers.js';

describe('the search_messages action', () => {
  it('answers through the index it is given, validates its params once, and needs an index', async () => {
    const dag = new MemoryDag();
    await writeGolden(dag);
    const root = tempDir();
    const mirror = createNodeMirror({ dag, root });
    await mirror.sync('golden-1');
    const search = new SearchIndex({ root });
    await search.update('golden-1');
    const actions = createActions({ dag, mirror, search });
    const r = await actions.handle({
      id: 7,
      action: 'search_messages',
      params: { query: 'TODO', session_id: 'golden-1', role: 'tool', all_branches: true, limit: 2 },
    });
    expect(r).toMatchObject({ id: 7, ok: true, result: { more: true } });
    const hits = (r as { result: { hits: { node: string; role: string }[] } }).result.hits;
    expect(hits.map((h) => h.role)).toEqual(['tool', 'tool']);
    for (const [params, message] of [
      [{ query: 'x', role: 'robot' }, 'role must be'],
      [{ query: 'x', all_branches: 'yes' }, 'all_branches must be a boolean'],
      [{ query: 'x', limit: 5000 }, 'limit must be an integer from 1 to 1000'],
      [{ query: 7 }, 'query must be a string'],
      [{ query: 'x', session_id: '' }, 'session_id must be a non-empty string'],
    ] as const) {
      const bad = await actions.handle({ action: 'search_messages', params });
      expect(bad).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } });
      expect((bad as { error: { message: string } }).error.message).toContain(message);
    }
    const without = await createActions({ dag, mirror }).handle({ action: 'search_messages', params: { query: 'x' } });
    expect(without).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } });
    search.close();
  });
});
