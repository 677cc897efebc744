import { join } from 'node:path';
import { sql, type Migration } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import {
  MIGRATION_TABLE,
  migrateToLatest,
  openPostgres,
  openSqlite,
  resolveSchemaNames,
  schemaMigrations,
} from '../src/index.js';
import { applyMigrations } from '../src/migrations.js';
import { freshDatabase } from './helpers/postgres.js';
import { tempDir } from './helpers/temp.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function sqliteFile(): string {
  const tmp = tempDir();
  cleanups.push(tmp.remove);
  return join(tmp.dir, 'm.sqlite');
}

describe('migrations on SQLite', () => {
  it('run on open, once: reopening applies nothing and keeps the data', async () => {
    const file = sqliteFile();
    const first = await openSqlite({ file });
    await first.writer.createSession({ id: 's' });
    await first.writer.appendNode({ id: 'n', session_id: 's', role: 'user', content: 'kept' });
    expect(await migrateToLatest(first.db)).toEqual([]);
    await first.close();

    const again = await openSqlite({ file });
    cleanups.push(() => again.close());
    expect((await again.db.selectFrom(MIGRATION_TABLE).select('name').execute()).map((r) => r.name)).toEqual([
      '0001_initial',
      '0002_change_marks',
    ]);
    const nodes = [];
    for await (const n of again.dag.nodesAfter('s')) nodes.push(n.content);
    expect(nodes).toEqual(['kept']);
  });

  it('create the tables, the unique (session_id, seq) and the indexes of DESIGN.md §2', async () => {
    const store = await openSqlite({ file: sqliteFile() });
    cleanups.push(() => store.close());
    const objects = await sql<{ type: string; name: string; tbl_name: string }>`
      select type, name, tbl_name from sqlite_master where name not like 'sqlite_%' order by name`.execute(store.db);
    const names = objects.rows.map((r) => `${r.type} ${r.name}`);
    for (const expected of [
      'table projects',
      'table sessions',
      'table nodes',
      'index nodes_caller_idx',
      'index nodes_predecessor_idx',
      'index sessions_project_id_idx',
      'index projects_name_unique',
    ]) {
      expect(names).toContain(expected);
    }
    await store.writer.createSession({ id: 's' });
    await store.writer.appendNode({ id: 'a', session_id: 's', role: 'user', content: 'x' });
    // The constraint itself, not only our writer, refuses a second row at one seq.
    await expect(
      sql`insert into nodes (id, session_id, seq, role, created_at) values ('b', 's', 1, 'user', 0)`.execute(store.db),
    ).rejects.toThrow(/UNIQUE/);
    // The pager's query and the edge look-ups are index searches, not table scans.
    const plan = async (query: ReturnType<typeof sql>) =>
      (await sql<{ detail: string }>`explain query plan ${query}`.execute(store.db)).rows
        .map((r) => r.detail)
        .join(' | ');
    expect(await plan(sql`select * from nodes where session_id = 's' and seq > 5 order by seq limit 500`)).toMatch(
      /SEARCH nodes USING INDEX \S+ \(session_id=\? AND seq>\?\)/,
    );
    expect(await plan(sql`select id from nodes where caller = 'a'`)).toMatch(
      /USING (COVERING )?INDEX nodes_caller_idx/,
    );
    expect(await plan(sql`select id from nodes where predecessor = 'a'`)).toMatch(
      /USING (COVERING )?INDEX nodes_predecessor_idx/,
    );
    expect(await plan(sql`select id from sessions where project_id = 'p'`)).toMatch(
      /USING (COVERING )?INDEX sessions_project_id_idx/,
    );
    expect(await plan(sql`select * from nodes where session_id = 's' and seq > 5 order by seq limit 500`)).not.toMatch(
      /TEMP B-TREE/,
    );
  });

  it('are versioned: a file made by an older schema gets exactly the steps it lacks', async () => {
    const file = sqliteFile();
    const names = resolveSchemaNames();
    const v1 = schemaMigrations('sqlite', names);
    const store = await openSqlite({ file, migrate: false });
    cleanups.push(() => store.close());
    expect(await applyMigrations(store.db, 'sqlite', v1)).toEqual(['0001_initial', '0002_change_marks']);
    await store.writer.createSession({ id: 's' });
    await store.writer.appendNode({ id: 'n', session_id: 's', role: 'user', content: 'from v1' });

    const v2: Record<string, Migration> = {
      ...v1,
      '0002_node_tokens': {
        up: async (db) => void (await db.schema.alterTable('nodes').addColumn('tokens', 'integer').execute()),
      },
    };
    expect(await applyMigrations(store.db, 'sqlite', v2)).toEqual(['0002_node_tokens']);
    expect(await applyMigrations(store.db, 'sqlite', v2)).toEqual([]);
    const row = await store.db.selectFrom('nodes').select(['id', 'tokens', 'content']).executeTakeFirstOrThrow();
    expect(row).toEqual({ id: 'n', tokens: null, content: '"from v1"' });
    expect(
      (await store.db.selectFrom(MIGRATION_TABLE).select('name').orderBy('name').execute()).map((r) => r.name),
    ).toEqual(['0001_initial', '0002_change_marks', '0002_node_tokens']);
  });

  it('a failing migration leaves no half-applied step and says which one failed', async () => {
    const store = await openSqlite({ file: sqliteFile(), migrate: false });
    cleanups.push(() => store.close());
    const broken: Record<string, Migration> = {
      ...schemaMigrations('sqlite', resolveSchemaNames()),
      '0002_broken': {
        up: async (db) => {
          await db.schema.createTable('half').addColumn('x', 'text').execute();
          await sql`this is not sql`.execute(db);
        },
      },
    };
    await expect(applyMigrations(store.db, 'sqlite', broken)).rejects.toMatchObject({
      code: 'DB_ERROR',
      data: { migration: '0002_broken' },
    });
    const tables = await sql<{
      name: string;
    }>`select name from sqlite_master where type = 'table' and name in ('half', 'nodes')`.execute(store.db);
    expect(tables.rows).toEqual([]);
  });
});

describe('migrations on PostgreSQL', () => {
  it('run once even when four stores open a new database at the same moment', async () => {
    const database = await freshDatabase();
    cleanups.push(database.drop);
    const stores = await Promise.all(Array.from({ length: 4 }, () => openPostgres({ connectionString: database.url })));
    cleanups.push(async () => {
      for (const s of stores) await s.close();
    });
    const rows = await stores[0]!.db.selectFrom(MIGRATION_TABLE).select('name').execute();
    expect(rows.map((r) => r.name)).toEqual(['0001_initial', '0002_change_marks']);
    expect(await migrateToLatest(stores[1]!.db)).toEqual([]);
    const indexes = await sql<{
      indexname: string;
    }>`select indexname from pg_indexes where schemaname = 'public' order by indexname`.execute(stores[0]!.db);
    expect(indexes.rows.map((r) => r.indexname)).toEqual(
      expect.arrayContaining([
        'nodes_caller_idx',
        'nodes_predecessor_idx',
        'nodes_session_seq_unique',
        'projects_name_unique',
        'sessions_project_id_idx',
      ]),
    );
    const types = await sql<{ column_name: string; data_type: string }>`
      select column_name, data_type from information_schema.columns where table_name = 'nodes' and column_name in ('created_at', 'seq', 'content') order by column_name`.execute(
      stores[0]!.db,
    );
    expect(types.rows).toEqual([
      { column_name: 'content', data_type: 'text' },
      { column_name: 'created_at', data_type: 'double precision' },
      { column_name: 'seq', data_type: 'integer' },
    ]);
  });
});
