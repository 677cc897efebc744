import { join } from 'node:path';
import { canonicalJson } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres, openSqlite } from '../../src/index.js';
import { freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { FLAT_DAG_STEPS, FlatDagApp, T0, flatDagScenario } from './fixtures/flat-dag-db.js';
import { tablesHash } from './fixtures/table-hash.js';
import { assertHealthy, backfill, git, refsOf, repoFacts } from './repo-facts.js';

const tmp = tempDir('entity-git-app-flat-');
afterAll(() => tmp.remove());

const file = join(tmp.dir, 'dag.sqlite');
const app = new FlatDagApp(file, { create: true });
flatDagScenario(app);
app.close();

const trailers = (node: string, seq: number, turn: number) => [
  '',
  'Session: f1',
  `Turn: ${turn}`,
  `Node: ${node}`,
  `Seq: ${seq}`,
];
const turn1 = [
  'turn 1: What is in the repo?',
  '',
  'assistant: Two files: a.ts and b.ts.',
  'tools: list',
  '',
  '[meta: turn took 4.0s, 1 tool, 152 tokens]',
  ...trailers('n3', 4, 1),
].join('\n');

describe('the "flat-dag" schema, with no configuration', () => {
  it('is recognised and mirrored: both eras of rows, code nodes riding on their caller, the tables unchanged', async () => {
    const before = tablesHash(file);
    const store = await openSqlite({ file });
    expect(store.recognised).toBe('flat-dag');
    expect(await store.dag.getSession('f1')).toEqual({
      id: 'f1',
      title: 'The repo',
      agent_id: 'main',
      model: 'model-x',
      project_id: 'proj-2',
      head: 'n12',
      created_at: T0,
      metadata: { project_id: 'proj-2', theme: 'dark' },
    });
    const root = join(tmp.dir, 'backfill');
    await backfill(store.dag, root);
    const repo = join(root, 'f1');
    assertHealthy(repo);
    const facts = repoFacts(repo);
    expect(facts.head).toBe('fork-n11');
    const files = (...names: string[]) => [
      'messages/000001-u-n0.json',
      'messages/000002-a-n1.json',
      'messages/000003-t-n2.json',
      'messages/000004-a-n3.json',
      ...names.map((n) => `messages/${n}.json`),
      'meta.json',
    ];
    expect(Object.keys(facts.branches).sort()).toEqual(['fork-n11', 'main', 'retry-n8']);
    expect(facts.branches.main!.files).toEqual(files('000005-u-n4', '000006-a-n5', '000007-t-n6', '000008-a-n7'));
    expect(facts.branches['retry-n8']!.files).toEqual(
      files('000005-u-n4', '000009-a-n8', '000010-u-n9', '000011-s-n10'),
    );
    expect(facts.branches['fork-n11']!.files).toEqual(files('000012-u-n11', '000013-a-n12'));
    expect(facts.branches.main!.messages).toEqual([
      turn1,
      [
        'turn 2: Read a.ts',
        '',
        'assistant: a.ts exports a = 1.',
        'tools: read',
        '',
        '[meta: turn took 5.0s, 1 tool, 474 tokens]',
        ...trailers('n7', 8, 2),
      ].join('\n'),
    ]);
    expect(facts.branches['retry-n8']!.messages.slice(1)).toEqual([
      [
        'turn 2: Read a.ts',
        '',
        'assistant: a.ts holds one constant.',
        '',
        '[meta: turn took 60.0s, 207 tokens]',
        ...trailers('n8', 9, 2),
      ].join('\n'),
      ['turn 3: Deploy it', '', '[meta: turn took 1.0s]', ...trailers('n10', 11, 3)].join('\n'),
    ]);
    expect(facts.branches['fork-n11']!.messages[1]).toBe(
      [
        'turn 2: Read b.ts',
        '',
        'assistant: b.ts is empty.',
        '',
        '[meta: turn took 10.0s, 154 tokens]',
        ...trailers('n12', 13, 2),
      ].join('\n'),
    );
    // An older-era FunctionCall: a tool node on its caller, its name from `function_name`, its result the content.
    expect(`${git(repo, 'show', 'main:messages/000003-t-n2.json')}\n`).toBe(
      canonicalJson({
        id: 'n2',
        session_id: 'f1',
        seq: 3,
        role: 'tool',
        content: 'a.ts b.ts',
        predecessor: null,
        caller: 'n1',
        created_at: T0 + 3,
        metadata: {
          tool: 'list',
          row: { type: 'FunctionCall', data_json: { function_name: 'list', arguments: { path: '.' } } },
        },
      }),
    );
    // A system message kept in an llm node: role system, the application's type kept.
    expect(JSON.parse(git(repo, 'show', 'retry-n8:messages/000011-s-n10.json')).metadata.row.type).toBe('llm');
    // f2 opens with a system message: it joins turn 1.
    expect(repoFacts(join(root, 'f2')).branches.main!.files).toEqual([
      'messages/000001-s-p0.json',
      'messages/000002-u-p1.json',
      'messages/000003-a-p2.json',
      'meta.json',
    ]);
    await store.close();
    expect(tablesHash(file)).toBe(before);
  });

  it('live, one step at a time (an llm node calling a tool is held until its reply), ends where a fresh backfill does', async () => {
    const live = join(tmp.dir, 'live.sqlite');
    const writer = new FlatDagApp(live, { create: true });
    const root = join(tmp.dir, 'live');
    for (const [i, step] of FLAT_DAG_STEPS.entries()) {
      step(writer);
      // The application writes as the test syncs: its rows, dated in the past, are not quiet.
      const store = await openSqlite({ file: live, quietMs: Number.POSITIVE_INFINITY });
      const mirror = createNodeMirror({ dag: store.dag, root });
      for (const id of await store.dag.listSessions()) await mirror.sync(id);
      // After the tool call's result (n6), the turn still waits for the reply that follows it.
      if (i === 8) expect(git(join(root, 'f1'), 'rev-list', '--count', 'main')).toBe('1');
      await store.close();
    }
    writer.close();
    for (const id of ['f1', 'f2']) {
      expect(refsOf(join(root, id))).toEqual(refsOf(join(tmp.dir, 'backfill', id)));
      for (const branch of Object.keys(repoFacts(join(root, id)).branches))
        for (const entry of git(join(root, id), 'reflog', '--format=%H', branch).split('\n'))
          git(join(root, id), 'merge-base', '--is-ancestor', entry, branch);
    }
  });

  it('on PostgreSQL, the same tables give the same commits, and are not changed', async () => {
    const database = await freshDatabase();
    const { default: Pg } = await import('pg');
    const client = new Pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query(`create table sessions (id text primary key, title text not null default '', created_at double precision,
        updated_at double precision, model text, agent_id text, source text, extra_json text not null default '{}', last_node_id text)`);
      await client.query(`create table nodes (id text primary key, session_id text references sessions(id) on delete cascade,
        type text, predecessor text, caller text, created_at double precision, seq integer, data_json text)`);
      const sqlite = new Database(file, { readonly: true });
      for (const table of ['sessions', 'nodes']) {
        for (const row of sqlite.prepare(`select * from ${table}`).all() as Record<string, unknown>[]) {
          const cols = Object.keys(row);
          await client.query(
            `insert into ${table} (${cols.join(', ')}) values (${cols.map((_, i) => `$${i + 1}`).join(', ')})`,
            Object.values(row),
          );
        }
      }
      sqlite.close();
      const snapshot = async () =>
        JSON.stringify([
          (
            await client.query(
              `select table_name from information_schema.tables where table_schema = 'public' order by 1`,
            )
          ).rows,
          (await client.query('select * from sessions order by id')).rows,
          (await client.query('select * from nodes order by id')).rows,
        ]);
      const before = await snapshot();
      const store = await openPostgres({ connectionString: database.url });
      expect(store.recognised).toBe('flat-dag');
      const root = join(tmp.dir, 'postgres');
      await backfill(store.dag, root);
      await store.close();
      for (const id of ['f1', 'f2']) expect(refsOf(join(root, id))).toEqual(refsOf(join(tmp.dir, 'backfill', id)));
      expect(await snapshot()).toBe(before);
    } finally {
      await client.end();
      await database.drop();
    }
  });
});
