// The table form of the mapping on stores no known schema describes, on SQLite and PostgreSQL:
// time formats, HEAD by a JSON path, a linear order with no parent column, typed parts.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type MappingInput, openSqlite } from '../../src/index.js';
import { tempDir } from '../helpers/temp.js';
import { PARTS_SQL, T0 } from './fixtures/query-stores.js';
import { storesIn, trailer } from './mirror-both.js';
import { assertHealthy, git, refsOf, repoFacts } from './repo-facts.js';

const tmp = tempDir('entity-git-table-form-');
afterAll(() => tmp.remove());
const { sqliteStore, mirrorBoth } = storesIn(tmp.dir);

describe("the table form's time formats", () => {
  const ddl = (time: string) => [
    `create table threads (id text primary key, opened ${time})`,
    `create table notes (id text primary key, thread text, who text, body text, prev text, at ${time})`,
    `insert into threads values ('t1', '2026-05-23 01:33:20')`,
    `insert into notes values ('n1', 't1', 'user', 'Hi', null, '2026-05-23 01:33:21')`,
    `insert into notes values ('n2', 't1', 'assistant', 'Hello', 'n1', '2026-05-23 01:33:22.500')`,
  ];
  const mapping = (format: 's' | 'text'): MappingInput => ({
    sessions: { table: 'threads', id: 'id', created_at: { column: 'opened', format } },
    nodes: {
      table: 'notes',
      id: 'id',
      session_id: 'thread',
      seq: { rank: 'at' },
      role: 'who',
      content: 'body',
      predecessor: 'prev',
      created_at: { column: 'at', format },
    },
  });

  it('SQL text (SQLite CURRENT_TIMESTAMP) and a PostgreSQL timestamp read as the same seconds, the same commits', async () => {
    const { report, sqliteRoot, postgresRoot } = await mirrorBoth(
      { sqlite: ddl('text'), postgres: ddl('timestamp') },
      mapping('text'),
    );
    expect(report).toEqual([['t1', 'backfilled']]);
    const repo = join(sqliteRoot, 't1');
    assertHealthy(repo);
    expect(JSON.parse(git(repo, 'show', 'main:messages/000002-a-n2.json')).created_at).toBe(T0 + 2.5);
    expect(refsOf(join(postgresRoot, 't1'))).toEqual(refsOf(repo));
  });

  it('milliseconds, and a format that is none is refused at load', async () => {
    const { sqliteRoot, postgresRoot } = await mirrorBoth(PARTS_SQL, {
      sessions: { table: 'chat', id: 'id', created_at: { column: 'created_at', format: 'ms' } },
      nodes: {
        table: 'msg',
        id: 'id',
        session_id: 'chat_id',
        seq: { rank: 'created_at' },
        role: 'role',
        content: 'content',
        predecessor: null,
        created_at: { column: 'created_at', format: 'ms' },
      },
    });
    const repo = join(sqliteRoot, 'K1');
    // No predecessor column here: every row is a root, and the first is on main.
    expect(JSON.parse(git(repo, 'show', 'main:messages/000001-u-K1-a.json')).created_at).toBe(T0 + 1);
    expect(refsOf(join(postgresRoot, 'K1'))).toEqual(refsOf(repo));
    const file = sqliteStore(PARTS_SQL);
    await expect(
      openSqlite({
        file,
        mapping: {
          ...mapping('s'),
          sessions: { table: 'chat', id: 'id', created_at: { column: 'created_at', format: 'days' } },
        } as unknown as MappingInput,
      }),
    ).rejects.toMatchObject({ code: 'INVALID_OPTION' });
  });
});

describe("the table form's head by a JSON path", () => {
  it('HEAD follows a key of a JSON column, on SQLite and PostgreSQL', async () => {
    const ddl = (json: string) => [
      `create table threads (id text primary key, opened bigint, state ${json})`,
      `create table notes (id text primary key, thread text, who text, body text, prev text, at bigint)`,
      `insert into threads values ('t1', ${T0}, '{"view": {"current": "n3"}}')`,
      `insert into notes values ('n1', 't1', 'user', 'Hi', null, ${T0 + 1})`,
      `insert into notes values ('n2', 't1', 'assistant', 'Hello', 'n1', ${T0 + 2})`,
      `insert into notes values ('n3', 't1', 'assistant', 'Hey', 'n1', ${T0 + 3})`,
    ];
    const { sqliteRoot, postgresRoot } = await mirrorBoth(
      { sqlite: ddl('text'), postgres: ddl('jsonb') },
      {
        sessions: { table: 'threads', id: 'id', created_at: 'opened', head: 'state.view.current' },
        nodes: {
          table: 'notes',
          id: 'id',
          session_id: 'thread',
          seq: { rank: 'at' },
          role: 'who',
          content: 'body',
          predecessor: 'prev',
          created_at: 'at',
        },
      },
    );
    const repo = join(sqliteRoot, 't1');
    assertHealthy(repo);
    expect(repoFacts(repo).head).toBe('retry-n3');
    expect(refsOf(join(postgresRoot, 't1'))).toEqual(refsOf(repo));
  });
});

describe("the table form's linear order", () => {
  it('no parent column: each row continues the one before it, one branch, a commit per user turn, on SQLite and PostgreSQL', async () => {
    const { report, sqliteRoot, postgresRoot } = await mirrorBoth(PARTS_SQL, {
      sessions: { table: 'chat', id: 'id', created_at: { column: 'created_at', format: 'ms' } },
      nodes: {
        table: 'msg',
        id: 'id',
        session_id: 'chat_id',
        seq: { rank: 'created_at' },
        role: 'role',
        content: 'content',
        predecessor: { linear: true },
        created_at: { column: 'created_at', format: 'ms' },
        open: { roles: ['user'] },
      },
    });
    expect(report).toEqual([['K1', 'backfilled']]);
    const repo = join(sqliteRoot, 'K1');
    assertHealthy(repo);
    const facts = repoFacts(repo);
    expect(Object.keys(facts.branches)).toEqual(['main']);
    expect(facts.branches.main!.files).toEqual([
      'messages/000001-u-K1-a.json',
      'messages/000002-a-K1-b.json',
      'messages/000003-a-K1-f.json',
      'messages/000004-u-K1-c.json',
      'messages/000005-a-K1-d.json',
      'messages/000006-a-K1-e.json',
      'meta.json',
    ]);
    expect(facts.branches.main!.commits).toBe(2);
    expect(JSON.parse(git(repo, 'show', 'main:messages/000004-u-K1-c.json')).predecessor).toBe('K1-f');
    expect(refsOf(join(postgresRoot, 'K1'))).toEqual(refsOf(repo));
  });
});

describe("the table form's typed parts", () => {
  it('the reply from text parts, tools from tool-<name> parts, step-start and reasoning in neither, on SQLite and PostgreSQL', async () => {
    const parts = JSON.stringify([
      { type: 'step-start' },
      { type: 'reasoning', text: 'Is it sunny?' },
      { type: 'tool-getWeather', toolCallId: 't1', input: { city: 'Nice' }, output: 'sunny' },
      { type: 'step-start' },
      { type: 'tool-getWeather', toolCallId: 't2', input: { city: 'Lyon' }, output: 'rain' },
      { type: 'text', text: 'Nice is sunny, ' },
      { type: 'text', text: 'Lyon is not.' },
    ]);
    const ddl = (json: string) => [
      `create table threads (id text primary key, opened bigint)`,
      `create table msgs (id text primary key, thread text, role text, parts ${json}, parent text, at bigint)`,
      `insert into threads values ('p1', ${T0})`,
      `insert into msgs values ('q', 'p1', 'user', '[{"type":"text","text":"Weather?"}]', null, ${T0 + 1})`,
      `insert into msgs values ('r', 'p1', 'assistant', '${parts}', 'q', ${T0 + 2})`,
    ];
    const { sqliteRoot, postgresRoot } = await mirrorBoth(
      { sqlite: ddl('text'), postgres: ddl('jsonb') },
      {
        sessions: { table: 'threads', id: 'id', created_at: 'opened' },
        nodes: {
          table: 'msgs',
          id: 'id',
          session_id: 'thread',
          seq: { rank: 'at' },
          role: 'role',
          content: 'parts',
          parts: { from: 'parts' },
          predecessor: 'parent',
          created_at: 'at',
        },
      },
    );
    const repo = join(sqliteRoot, 'p1');
    assertHealthy(repo);
    expect(repoFacts(repo).branches.main!.messages).toEqual([
      `turn 1: Weather?\n\nassistant: Nice is sunny, Lyon is not.\ntools: getWeather × 2\n\n[meta: turn took 1.0s, 2 tools]\n${trailer('p1', 'r', 2, 1)}`,
    ]);
    const reply = JSON.parse(git(repo, 'show', 'main:messages/000002-a-r.json'));
    expect(reply.content).toBe('Nice is sunny, Lyon is not.');
    expect(reply.metadata.row.parts[1]).toEqual({ type: 'reasoning', text: 'Is it sunny?' });
    expect(refsOf(join(postgresRoot, 'p1'))).toEqual(refsOf(repo));
  });
});
