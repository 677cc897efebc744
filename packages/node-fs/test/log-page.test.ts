// A page of a branch's log (`Mirror.log(id, { page })`): its commits are the slice of the whole
// log, its count the branch's turns, on a repository with a commit-graph, with live turns above
// it, without one, and on a cold mirror; bad or out-of-range pages are INVALID_ARGUMENT.
import { createMirror, isEntityGitError, type Mirror } from '@entity-git/core';
import { COMMIT_GRAPH_PATH, type Storage } from '@entity-git/git';
import { createNodeMirror, nodeStorage } from '@entity-git/node-fs';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { growingSession, tempDir } from './helpers.js';

const PAGES = [
  { offset: 0, limit: 1 },
  { offset: 0, limit: 10 },
  { offset: 3, limit: 7 },
  { offset: 60, limit: 10 },
  { offset: 64, limit: 100 },
  { offset: 0, limit: 10_000 },
];

/** node storage whose codec counts inflates: every object read from disk is one. */
function counting(): { storage: Storage; inflates: () => number } {
  const base = nodeStorage();
  let n = 0;
  const codec = { ...base.codec!, inflate: (d: Uint8Array) => (n++, base.codec!.inflate(d)) };
  return { storage: { ...base, codec }, inflates: () => n };
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return isEntityGitError(err) ? err.code : String(err);
  }
}

/** Every page equal to the slice of the whole log; each read on a fresh (cold) mirror and on a warm one. */
async function pagesMatch(fresh: () => Mirror, branch?: string): Promise<void> {
  const whole = await fresh().log('s', branch ? { branch } : {});
  const warm = fresh();
  await warm.log('s', branch ? { branch } : {});
  for (const page of PAGES.filter((p) => p.offset < whole.length)) {
    const want = {
      total: whole.length,
      offset: page.offset,
      commits: whole.slice(page.offset, page.offset + page.limit),
    };
    expect(await fresh().log('s', { ...(branch ? { branch } : {}), page })).toEqual(want);
    expect(await warm.log('s', { ...(branch ? { branch } : {}), page })).toEqual(want);
  }
}

describe('a page of the log', () => {
  it('from the commit-graph, with live turns above it, and without a graph: the slice of the whole log and its count', async () => {
    const c = growingSession('Pages');
    await c.turns(60);
    const root = tempDir();
    await createNodeMirror({ dag: c.dag, root }).sync('s');
    const fresh = () => createNodeMirror({ dag: c.dag, root });
    await pagesMatch(fresh);
    // Five live turns since the pack: above the graph, read one by one.
    const live = fresh();
    for (let t = 0; t < 5; t++) {
      await c.turns(1);
      await live.sync('s');
    }
    const whole = await fresh().log('s');
    expect(whole).toHaveLength(65);
    expect(whole.map((x) => x.turn)).toEqual(Array.from({ length: 65 }, (_, i) => 65 - i));
    await pagesMatch(fresh);
    await pagesMatch(fresh, 'main');
    // The count from the graph: a cold page of 10 reads the 5 live commits and the page's, not all 65.
    const paged = counting();
    const page = await createMirror({ dag: c.dag, root, storage: paged.storage }).log('s', {
      page: { offset: 0, limit: 10 },
    });
    expect(page.total).toBe(65);
    const all = counting();
    await createMirror({ dag: c.dag, root, storage: all.storage }).log('s');
    expect(paged.inflates()).toBeLessThan(25);
    expect(all.inflates()).toBeGreaterThanOrEqual(65);
    // A kept log of an older tip is reused: the same pages.
    expect(await live.log('s', { page: { offset: 2, limit: 3 } })).toEqual({
      total: 65,
      offset: 2,
      commits: whole.slice(2, 5),
    });
    // Without the graph: the walk, the same pages.
    rmSync(join(root, 's', '.git', COMMIT_GRAPH_PATH));
    await pagesMatch(fresh);
  });

  it('the default (no page) is the whole log, as before', async () => {
    const c = growingSession('Default');
    await c.turns(3);
    const root = tempDir();
    const m = createNodeMirror({ dag: c.dag, root });
    await m.sync('s');
    const whole = await m.log('s');
    expect(Array.isArray(whole)).toBe(true);
    expect(whole.map((x) => x.turn)).toEqual([3, 2, 1]);
    expect(await m.log('s', { page: undefined } as { branch?: string })).toEqual(whole);
  });

  it('hostile or out-of-range pages: INVALID_ARGUMENT, before anything is read; an unknown branch BRANCH_NOT_FOUND', async () => {
    const c = growingSession('Hostile');
    await c.turns(4);
    const root = tempDir();
    const m = createNodeMirror({ dag: c.dag, root });
    await m.sync('s');
    const bad: unknown[] = [
      null,
      7,
      'page',
      [],
      {},
      { offset: 0 },
      { limit: 5 },
      { offset: -1, limit: 5 },
      { offset: 1.5, limit: 5 },
      { offset: '0', limit: 5 },
      { offset: Number.NaN, limit: 5 },
      { offset: 2 ** 60, limit: 5 },
      { offset: 0, limit: 0 },
      { offset: 0, limit: 10_001 },
      { offset: 0, limit: Number.POSITIVE_INFINITY },
      { offset: 4, limit: 1 }, // past the last of 4 commits
      { offset: 100, limit: 1 },
    ];
    for (const page of bad)
      expect(await codeOf(m.log('s', { page } as { page: { offset: number; limit: number } }))).toBe(
        'INVALID_ARGUMENT',
      );
    // Checked before the session is looked for.
    expect(await codeOf(m.log('ghost', { page: { offset: -1, limit: 1 } }))).toBe('INVALID_ARGUMENT');
    expect(await codeOf(m.log('ghost', { page: { offset: 0, limit: 1 } }))).toBe('SESSION_NOT_FOUND');
    expect(await codeOf(m.log('s', { branch: 'nope', page: { offset: 0, limit: 1 } }))).toBe('BRANCH_NOT_FOUND');
    expect(await m.log('s', { page: { offset: 3, limit: 1 } })).toMatchObject({ total: 4, offset: 3 });
  });
});
