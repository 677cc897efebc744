import { join } from 'node:path';
import { type DagNode, parseTrailers } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { type MappingInput, openPostgres, openSqlite } from '../../src/index.js';
import { freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { MESSAGES_STEPS, MessagesApp } from './fixtures/messages-db.js';
import { assertHealthy, backfill, git, refsOf } from './repo-facts.js';

const tmp = tempDir('entity-git-app-seq-');
afterAll(() => tmp.remove());

async function nodesOf(
  dag: { nodesAfter(id: string, after?: number, o?: { batchSize?: number }): AsyncIterable<DagNode> },
  id: string,
  batchSize = 500,
) {
  const out: DagNode[] = [];
  for await (const n of dag.nodesAfter(id, 0, { batchSize })) out.push(n);
  return out;
}

/** The Turn trailers along a branch's first parents, oldest first. */
function turnsOf(repo: string, branch: string): number[] {
  return git(repo, 'log', '--first-parent', '--reverse', '--format=%H', branch)
    .split('\n')
    .map((sha) => parseTrailers(`${git(repo, 'log', '-1', '--format=%B', sha).trimEnd()}\n`)!.turn);
}

// A table of our own with a time column and no seq, for the order's rules alone.
const MAPPING: MappingInput = {
  sessions: { table: 'chats', id: 'id', created_at: 'started' },
  nodes: {
    table: 'lines',
    id: 'id',
    session_id: 'chat',
    seq: { rank: 'at' },
    role: 'who',
    content: 'body',
    predecessor: 're',
    created_at: 'at',
  },
};
const ROWS: [string, string, number, string, string | null][] = [
  // id, who, at, body, re: three rows at one time, ordered by id in byte order (B < a < b).
  ['b', 'assistant', 5, 'second reply', 'u'],
  ['u', 'user', 1, 'hello', null],
  ['B', 'assistant', 5, 'first reply', 'u'],
  ['a', 'assistant', 5, 'middle reply', 'u'],
];

describe('a derived seq: the rank by time, then by id', () => {
  it('orders ties by id in byte order, the same on SQLite and PostgreSQL, and pages without repeating a node', async () => {
    const file = join(tmp.dir, 'ties.sqlite');
    const db = new Database(file);
    db.exec(`create table chats (id text primary key, started real); create table lines (id text primary key, chat text,
      who text, at real, body text, re text); insert into chats values ('c', 0)`);
    for (const [id, who, at, body, re] of ROWS)
      db.prepare('insert into lines values (?, ?, ?, ?, ?, ?)').run(id, 'c', who, at, body, re);
    db.close();
    const store = await openSqlite({ file, mapping: MAPPING });
    const order = (nodes: DagNode[]) => nodes.map((n) => `${n.seq}:${n.id}`);
    expect(order(await nodesOf(store.dag, 'c'))).toEqual(['1:u', '2:B', '3:a', '4:b']);
    expect(order(await nodesOf(store.dag, 'c', 1))).toEqual(['1:u', '2:B', '3:a', '4:b']);
    const root = join(tmp.dir, 'ties-sqlite');
    await backfill(store.dag, root);
    await store.close();

    const database = await freshDatabase();
    const { default: Pg } = await import('pg');
    const client = new Pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      // The id column sorts by an ICU collation (a, b, B): the tie-break must not follow it.
      await client.query(`create table chats (id text primary key, started double precision);
        create table lines (id text collate "und-x-icu" primary key, chat text, who text, at double precision, body text, re text);
        insert into chats values ('c', 0)`);
      for (const [id, who, at, body, re] of ROWS)
        await client.query('insert into lines values ($1, $2, $3, $4, $5, $6)', [id, 'c', who, at, body, re]);
      const pgStore = await openPostgres({ connectionString: database.url, mapping: MAPPING });
      expect(order(await nodesOf(pgStore.dag, 'c', 1))).toEqual(['1:u', '2:B', '3:a', '4:b']);
      const pgRoot = join(tmp.dir, 'ties-postgres');
      await backfill(pgStore.dag, pgRoot);
      await pgStore.close();
      expect(refsOf(join(pgRoot, 'c'))).toEqual(refsOf(join(root, 'c')));
    } finally {
      await client.end();
      await database.drop();
    }
  });

  it('stops a read whose pages a row with an older time renumbered, and the next read is whole', async () => {
    const file = join(tmp.dir, 'pages.sqlite');
    const app = new MessagesApp(file, { create: true });
    for (const step of MESSAGES_STEPS.slice(0, 6)) step(app);
    const store = await openSqlite({ file });
    const seen: string[] = [];
    const read = async () => {
      for await (const n of store.dag.nodesAfter('s1', 0, { batchSize: 2 })) {
        seen.push(n.id);
        if (seen.length === 2) app.user('s1', 'early', 'a1', 'written late, dated early', 1);
      }
    };
    await expect(read()).rejects.toMatchObject({ code: 'DB_ERROR', data: { sessionId: 's1' } });
    expect(seen).toEqual(['u1', 'a1']);
    expect((await nodesOf(store.dag, 's1', 2)).map((n) => `${n.seq}:${n.id}`)).toEqual([
      '1:u1',
      '2:early',
      '3:a1',
      '4:u2',
      '5:a2',
    ]);
    await store.close();
    app.close();
  });

  it('a row older than the mirrored ones renumbers those after it: the next sync commits again, nothing twice on a branch', async () => {
    const file = join(tmp.dir, 'late.sqlite');
    const app = new MessagesApp(file, { create: true });
    for (const step of MESSAGES_STEPS.slice(0, 6)) step(app); // s1: turn 1, title, turn 2 (u2, a2 at +70)
    const root = join(tmp.dir, 'late');
    const store = await openSqlite({ file });
    const mirror = createNodeMirror({ dag: store.dag, root });
    await mirror.sync('s1');
    const repo = join(root, 's1');
    const oldTip = git(repo, 'rev-parse', 'main');
    expect(git(repo, 'ls-tree', '--name-only', 'main', 'messages/')).toContain('messages/000004-a-a2.json');

    // Another client whose clock is behind: its prompt after a2 is dated before it.
    app.user('s1', 'u3', 'a2', 'And the tests?', 65);
    const second = await mirror.sync('s1');
    expect(second.derivation).toBe('full');
    app.assistant('s1', 'a3', 'u3', 'There are none.', 75, { input: 10, output: 3 });
    await mirror.sync('s1');
    assertHealthy(repo);
    // The time order is the seq: u3 is 4th, a2 5th, a3 6th; every commit from turn 2 changed.
    expect(git(repo, 'ls-tree', '--name-only', 'main', 'messages/').split('\n')).toEqual([
      'messages/000001-u-u1.json',
      'messages/000002-a-a1.json',
      'messages/000003-u-u2.json',
      'messages/000004-u-u3.json',
      'messages/000005-a-a2.json',
      'messages/000006-a-a3.json',
    ]);
    expect(turnsOf(repo, 'main')).toEqual([1, 2, 3]);
    git(repo, 'merge-base', '--is-ancestor', git(repo, 'rev-parse', 'main~2'), oldTip); // turn 1 is kept
    expect(git(repo, 'reflog', '--format=%H', 'main').split('\n')).toContain(oldTip);
    const fresh = join(tmp.dir, 'late-fresh');
    await backfill(store.dag, fresh);
    expect(refsOf(repo)).toEqual(refsOf(join(fresh, 's1')));
    await store.close();
    app.close();
  });

  it('a row rewritten by INSERT OR REPLACE: as it was, nothing moves; a placeholder filled, its turn is committed once', async () => {
    const file = join(tmp.dir, 'replace.sqlite');
    const app = new MessagesApp(file, { create: true });
    for (const step of MESSAGES_STEPS.slice(0, 3)) step(app); // s1: u1, a1
    const root = join(tmp.dir, 'replace');
    // The fixture's rows are dated in the past: the quiet time would complete the placeholder's turn.
    const store = await openSqlite({ file, quietMs: Number.POSITIVE_INFINITY });
    const mirror = createNodeMirror({ dag: store.dag, root });
    await mirror.sync('s1');
    const tip = git(join(root, 's1'), 'rev-parse', 'main');
    MESSAGES_STEPS[2]!(app); // the dispatcher saves the same row again: a new rowid, the same values
    expect((await mirror.sync('s1')).noop).toBe(true);

    app.user('s1', 'u2', 'a1', 'Summarise site.ts', 60);
    app.assistant('s1', 'a2', 'u2', '', 61, null); // the reply's row, saved before any text arrived
    expect((await mirror.sync('s1')).commitsWritten).toBe(0);
    app.assistant('s1', 'a2', 'u2', 'It prints hello.', 61, { input: 30, output: 4 });
    expect((await mirror.sync('s1')).commitsWritten).toBe(1);
    const repo = join(root, 's1');
    expect(git(repo, 'reflog', '--format=%H', 'main').split('\n')).toEqual([git(repo, 'rev-parse', 'main'), tip]);
    expect(git(repo, 'log', '-1', '--format=%B', 'main')).toContain('assistant: It prints hello.');
    await store.close();
    app.close();
  });
});
