import { join } from 'node:path';
import type { AppendNodeInput } from '@entity-git/core';
import { openSqlite } from '@entity-git/sqlite';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { PLAIN_ID, buildDb, git, json, run, tempDir } from './fixture.js';

const dir = tempDir();
const db = join(dir, 'dag.db');
const root = join(dir, 'sessions');
const eg = (...args: string[]) => run(['--db', db, '--root', root, ...args]);
const search = (...args: string[]) => run(['--root', root, 'search', ...args]);
const places = (r: { hits: { session: string; node: string; branch: string; turn: number; role: string }[] }) =>
  r.hits.map((h) => `${h.session}/${h.node} ${h.role} ${h.branch}#${h.turn}`).sort();

/** Messages the application adds to the plain session, written to its database. */
async function append(...nodes: Omit<AppendNodeInput, 'session_id'>[]): Promise<void> {
  const store = await openSqlite({ file: db });
  try {
    for (const n of nodes) await store.writer.appendNode({ ...n, session_id: PLAIN_ID });
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  await buildDb(db);
  expect((await eg('sync')).code).toBe(0);
});

describe('entity-git search', () => {
  it('finds what the sync wrote, with no database, each hit at its turn and commit', async () => {
    const r = await search('readme', '--json');
    expect(places(json(r))).toEqual([
      `${PLAIN_ID}/p-a3 assistant main#2`,
      `${PLAIN_ID}/p-t1 tool main#2`,
      `${PLAIN_ID}/p-u2 user main#2`,
    ]);
    const hit = json(r).hits[0];
    expect(hit.commit).toBe(
      git(join(root, PLAIN_ID), 'rev-list', '--first-parent', '--reverse', 'main').split('\n')[1],
    );
    const every = json(await search('todo', '--all-branches', '--role', 'tool', '--session', 'golden-1', '--json'));
    expect(places(every)).toEqual([
      'golden-1/t2 tool fork-u4#1',
      'golden-1/t3 tool main#2',
      'golden-1/t4 tool main#2',
      'golden-1/t5 tool main#2',
    ]);
    const text = await search('TOD[O]', '--branch', 'retry-a4r', '--limit', '1', '--regex');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^golden-1 retry-a4r turn [12] [0-9a-f]{12} \w+ \w+.*\n {4}.*TODO/);
    expect(text.stderr).toBe('entity-git: more messages match (--limit N shows more)\n');
  });

  it('exits 1 when nothing matches and 2 on a bad query', async () => {
    expect(await search('nowhere-to-be-found')).toEqual({ code: 1, stdout: '', stderr: '' });
    const bad = await search('x', '--role', 'robot');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('role must be user, assistant, tool or system');
    expect((await search('x', '--branch', 'main', '--all-branches')).code).toBe(2);
    expect((await search('(', '--regex')).code).toBe(2);
  });

  it('follows the next sync, and --reindex answers the same from the repositories alone', async () => {
    await append(
      { id: 'p-u9', role: 'user', content: 'Where is the changelog?', predecessor: 'p-a3', created_at: 1779600100 },
      { id: 'p-a9', role: 'assistant', content: 'No changelog yet.', predecessor: 'p-u9', created_at: 1779600101 },
    );
    expect((await search('changelog')).code).toBe(1);
    expect((await eg('sync')).code).toBe(0);
    const live = await search('changelog', '--json');
    expect(places(json(live))).toEqual([`${PLAIN_ID}/p-a9 assistant main#3`, `${PLAIN_ID}/p-u9 user main#3`]);
    const rebuilt = await search('changelog', '--json', '--reindex');
    expect(rebuilt.stderr).toMatch(/^entity-git: search index rebuilt from 3 repositories \(\d+ messages\)\n$/);
    expect(rebuilt.stdout).toBe(live.stdout);
  });

  it('--compact packs a live index back to what a rebuild leaves: no free page, one full-text segment, the same hits', async () => {
    await append({
      id: 'p-u10',
      role: 'user',
      content: 'And the roadmap?',
      predecessor: 'p-a9',
      created_at: 1779600102,
    });
    expect((await eg('sync')).code).toBe(0);
    const file = join(root, '.entity-git-search.db');
    const layout = () => {
      const sqlite = new Database(file, { readonly: true });
      try {
        return {
          free: sqlite.pragma('freelist_count', { simple: true }),
          segments: sqlite.prepare('SELECT count(DISTINCT segid) AS n FROM words_idx').get(),
        };
      } finally {
        sqlite.close();
      }
    };
    // The sync's update wrote a segment of its own beside the rebuild's.
    expect(layout().segments).toEqual({ n: 2 });
    const before = await search('roadmap', '--all-branches', '--json');
    expect(places(json(before))).toEqual([`${PLAIN_ID}/p-u10 user main#4`]);
    const packed = await search('--compact');
    expect(packed.code).toBe(0);
    expect(packed.stdout).toBe('');
    expect(packed.stderr).toMatch(/^entity-git: search index compacted: \d+\.\d MiB → \d+\.\d MiB\n$/);
    expect(layout()).toEqual({ free: 0, segments: { n: 1 } });
    expect((await search('roadmap', '--all-branches', '--json')).stdout).toBe(before.stdout);
  });
});
