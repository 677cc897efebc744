import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqlStore, openSqlite, resolveSchemaNames, type SchemaNamesInput } from '../src/index.js';
import { freshDatabase } from './helpers/postgres.js';
import { tempDir } from './helpers/temp.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

// A chat app's own database, older than entity-git: other table and column names, integer
// thread ids, no agent, model, project, caller or metadata columns.
const THEIR_SCHEMA = [
  `create table threads (thread_id integer primary key, subject text, started real not null, leaf text)`,
  `create table messages (message_id text primary key, thread integer not null references threads(thread_id),
     position integer not null, speaker text not null, body text, reply_to text, sent real not null, unique (thread, position))`,
  `insert into threads values (7, 'Trip planning', 1700000000.5, 'm3')`,
  `insert into threads values (8, 'Empty', 1700000100, null)`,
  `insert into messages values ('m1', 7, 1, 'system', '"Be brief."', null, 1700000001)`,
  `insert into messages values ('m2', 7, 2, 'user', '{"text":"Where to in May? 🌍"}', 'm1', 1700000002.25)`,
  `insert into messages values ('m3', 7, 3, 'assistant', '"Lisbon."', 'm2', 1700000003)`,
];

const THEIR_NAMES: SchemaNamesInput = {
  sessions: {
    table: 'threads',
    id: 'thread_id',
    title: 'subject',
    agent_id: null,
    model: null,
    project_id: null,
    head: 'leaf',
    created_at: 'started',
    metadata: null,
  },
  nodes: {
    table: 'messages',
    id: 'message_id',
    session_id: 'thread',
    seq: 'position',
    role: 'speaker',
    content: 'body',
    predecessor: 'reply_to',
    caller: null,
    created_at: 'sent',
    metadata: null,
  },
};

function theirSqliteDb(): { db: Kysely<any>; raw: Database.Database } {
  const tmp = tempDir();
  cleanups.push(tmp.remove);
  const raw = new Database(join(tmp.dir, 'their.sqlite'));
  for (const statement of THEIR_SCHEMA) raw.exec(statement);
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: raw }) });
  cleanups.push(() => db.destroy());
  return { db, raw };
}

describe('a DagSource over an existing database with other names (SQLite)', () => {
  it('reads the sessions and nodes in place, absent columns as null, and adds no tables', async () => {
    const { db, raw } = theirSqliteDb();
    const store = await createSqlStore({ db, names: THEIR_NAMES });
    expect(await store.dag.listSessions()).toEqual(['7', '8']);
    expect(await store.dag.getSession('7')).toEqual({
      id: '7',
      title: 'Trip planning',
      agent_id: null,
      model: null,
      project_id: null,
      head: 'm3',
      created_at: 1700000000.5,
      metadata: null,
    });
    expect(await store.dag.getHead('7')).toBe('m3');
    const nodes = [];
    for await (const n of store.dag.nodesAfter('7', 0, { batchSize: 2 })) nodes.push(n);
    expect(nodes).toEqual([
      {
        id: 'm1',
        session_id: '7',
        seq: 1,
        role: 'system',
        content: 'Be brief.',
        predecessor: null,
        caller: null,
        created_at: 1700000001,
        metadata: null,
      },
      {
        id: 'm2',
        session_id: '7',
        seq: 2,
        role: 'user',
        content: { text: 'Where to in May? 🌍' },
        predecessor: 'm1',
        caller: null,
        created_at: 1700000002.25,
        metadata: null,
      },
      {
        id: 'm3',
        session_id: '7',
        seq: 3,
        role: 'assistant',
        content: 'Lisbon.',
        predecessor: 'm2',
        caller: null,
        created_at: 1700000003,
        metadata: null,
      },
    ]);
    expect(raw.prepare(`select name from sqlite_master where type = 'table' order by name`).pluck().all()).toEqual([
      'messages',
      'threads',
    ]);
  });

  it('writes into their tables: the next position, their columns, and refuses what has no column', async () => {
    const { db, raw } = theirSqliteDb();
    const store = await createSqlStore({ db, names: THEIR_NAMES });
    const n = await store.writer.appendNode({
      id: 'm4',
      session_id: '7',
      role: 'user',
      content: 'And in June?',
      predecessor: 'm3',
      created_at: 1700000004,
    });
    expect(n.seq).toBe(4);
    expect(raw.prepare(`select * from messages where message_id = 'm4'`).get()).toEqual({
      message_id: 'm4',
      thread: 7,
      position: 4,
      speaker: 'user',
      body: '"And in June?"',
      reply_to: 'm3',
      sent: 1700000004,
    });
    await store.writer.setHead('7', 'm4');
    expect(raw.prepare(`select leaf from threads where thread_id = 7`).pluck().get()).toBe('m4');
    await expect(
      store.writer.appendNode({ id: 't1', session_id: '7', role: 'tool', content: 'x', caller: 'm3' }),
    ).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    await expect(
      store.writer.appendNode({ id: 'm5', session_id: '7', role: 'user', content: 'x', metadata: { a: 1 } }),
    ).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    await expect(store.writer.createSession({ id: '9', model: 'm' })).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    await expect(store.projects.listProjects()).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    expect(raw.prepare(`select count(*) from messages`).pluck().get()).toBe(4);
  });

  it('a row the model cannot take is a DB_ERROR naming the row, not a crash in the mirror', async () => {
    const { db, raw } = theirSqliteDb();
    raw.exec(`insert into messages values ('bad', 8, 1, 'user', 'not json', null, 1)`);
    raw.exec(`insert into messages values ('odd', 8, 2, 'narrator', '"x"', null, 2)`);
    const store = await createSqlStore({ db, names: THEIR_NAMES });
    const drain = async (after: number) => {
      for await (const _ of store.dag.nodesAfter('8', after)) {
        /* drain */
      }
    };
    await expect(drain(0)).rejects.toMatchObject({ code: 'DB_ERROR', data: { where: 'content of node "bad"' } });
    await expect(drain(1)).rejects.toMatchObject({ code: 'DB_ERROR', data: { nodeId: 'odd' } });
  });

  it('refuses a mapping with a misspelt key or an empty name', () => {
    expect(() => resolveSchemaNames({ sessions: { tittle: 'x' } as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
    expect(() => resolveSchemaNames({ sesions: {} } as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
    expect(() => resolveSchemaNames({ nodes: { seq: '' } })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
    expect(() => resolveSchemaNames({ nodes: { seq: null as never } })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
  });

  it('migrate: true creates the schema under the mapped names in a new file', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const store = await openSqlite({ file: join(tmp.dir, 'mapped.sqlite'), names: THEIR_NAMES, migrate: true });
    cleanups.push(() => store.close());
    await store.writer.createSession({ id: 'a' });
    await store.writer.appendNode({ id: 'x', session_id: 'a', role: 'user', content: 'hi' });
    const columns = await sql<{ name: string }>`select name from pragma_table_info('messages') order by cid`.execute(
      store.db,
    );
    expect(columns.rows.map((r) => r.name)).toEqual([
      'message_id',
      'thread',
      'position',
      'speaker',
      'body',
      'reply_to',
      'sent',
    ]);
  });
});

describe('a DagSource over an existing PostgreSQL database, in its own schema', () => {
  it('reads and writes schema-qualified tables', async () => {
    const database = await freshDatabase();
    cleanups.push(database.drop);
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: database.url });
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
    cleanups.push(() => db.destroy());
    await sql`create schema chat`.execute(db);
    for (const statement of THEIR_SCHEMA) {
      await sql
        .raw(
          statement
            .replace(/\b(threads|messages)\b/g, 'chat.$1')
            .replace('real not null', 'double precision not null')
            .replace(/sent real/, 'sent double precision'),
        )
        .execute(db);
    }
    const names: SchemaNamesInput = {
      sessions: { ...THEIR_NAMES.sessions, table: 'chat.threads' },
      nodes: { ...THEIR_NAMES.nodes, table: 'chat.messages' },
    };
    const store = await createSqlStore({ db, names });
    expect(await store.dag.listSessions()).toEqual(['7', '8']);
    const n = await store.writer.appendNode({
      id: 'm4',
      session_id: '7',
      role: 'user',
      content: 'And in June?',
      predecessor: 'm3',
      created_at: 1700000004.5,
    });
    expect(n.seq).toBe(4);
    const ids = [];
    for await (const node of store.dag.nodesAfter('7', 1)) ids.push([node.id, node.seq, node.created_at]);
    expect(ids).toEqual([
      ['m2', 2, 1700000002.25],
      ['m3', 3, 1700000003],
      ['m4', 4, 1700000004.5],
    ]);
    // A store made over the caller's db leaves it open.
    await store.close();
    expect((await sql<{ n: number }>`select count(*)::int as n from chat.messages`.execute(db)).rows[0]!.n).toBe(4);
  });
});
