import type { DagSource } from '@entity-git/core';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { FRAMEWORK_SCHEMAS, recogniseFramework, type FrameworkSchema, type Tables } from './framework-schemas.js';

/** A framework's store opened read-only: its DAG and what `watch` compares. */
export interface FrameworkStore {
  readonly schema: FrameworkSchema;
  readonly engine: 'sqlite' | 'postgres';
  readonly dag: DagSource;
  /** The Kysely the store reads through (read-only). */
  readonly db: Kysely<any>;
  /** Per session, a value that changes whenever the framework writes to it. */
  fingerprints(): Promise<Map<string, string>>;
  close(): Promise<void>;
}

export interface OpenFrameworkOptions {
  /** A SQLite file (absolute) or a `postgres://` URL. */
  db: string;
  engine: 'sqlite' | 'postgres';
  /** Told once per Python type a LangGraph value holds that cannot be read (the value is kept). */
  warn: (line: string) => void;
}

/**
 * The framework store the database is (LangGraph's checkpointers, Mastra's storage), opened
 * read-only, or null when its tables are none of {@link FRAMEWORK_SCHEMAS}' (or cannot be read:
 * the SQL store's own open then says why).
 */
export async function openFrameworkStore(options: OpenFrameworkOptions): Promise<FrameworkStore | null> {
  const tables = await readTables(options).catch(() => null);
  const schema = tables === null ? null : recogniseFramework(tables, options.engine);
  if (schema === null) return null;
  return schema.name === 'langgraph' ? openLangGraph(schema, options) : openMastra(schema, options);
}

async function openLangGraph(schema: FrameworkSchema, options: OpenFrameworkOptions): Promise<FrameworkStore> {
  const { openCheckpointsPostgres, openCheckpointsSqlite } = await import('@entity-git/langgraph');
  const onUnknownType = (type: string) =>
    options.warn(
      `a value of Python type ${type} cannot be read: kept as its data, its type in the node's metadata (python_types)`,
    );
  const store =
    options.engine === 'postgres'
      ? await openCheckpointsPostgres({ connectionString: options.db, onUnknownType })
      : await openCheckpointsSqlite({ file: options.db, onUnknownType });
  return {
    schema,
    engine: options.engine,
    dag: store.dag,
    db: store.db,
    fingerprints: () => store.checkpoints.newestIds(),
    close: () => store.close(),
  };
}

async function openMastra(schema: FrameworkSchema, options: OpenFrameworkOptions): Promise<FrameworkStore> {
  const { openMastraPostgres, openMastraSqlite, THREADS_TABLE, MESSAGES_TABLE } = await import('@entity-git/mastra');
  const store =
    options.engine === 'postgres'
      ? await openMastraPostgres({ connectionString: options.db })
      : await openMastraSqlite({ file: options.db });
  // Mastra edits messages in place and keeps no change marker: a thread's messages (count, newest)
  // and its `updatedAt` (bumped at each save) are what moves.
  const fingerprints = async () => {
    const rows = await sql<{ id: string; n: number | string; newest: unknown; updated: unknown }>`
      select t.id as id, count(m.id) as n, max(m."createdAt") as newest, t."updatedAt" as updated
      from ${sql.table(THREADS_TABLE)} t left join ${sql.table(MESSAGES_TABLE)} m on m.thread_id = t.id
      group by t.id, t."updatedAt"`.execute(store.db);
    return new Map(rows.rows.map((r) => [String(r.id), JSON.stringify([String(r.n), r.newest, r.updated])]));
  };
  return { schema, engine: options.engine, dag: store.dag, db: store.db, fingerprints, close: () => store.close() };
}

// The slices of the drivers used here (the CLI has no @types for them).
type BetterSqlite3 = new (
  file: string,
  options: { readonly: boolean; fileMustExist: boolean },
) => { prepare(sql: string): { all(): unknown[] }; close(): void };
interface PgModule {
  Client: new (config: {
    connectionString: string;
    options: string;
  }) => {
    on(event: 'error', listener: () => void): unknown;
    connect(): Promise<void>;
    query(text: string): Promise<{ rows: unknown[] }>;
    end(): Promise<void>;
  };
}

/** Every table's columns: SQLite's catalogue through a read-only connection, PostgreSQL's current schema. */
async function readTables(options: OpenFrameworkOptions): Promise<Tables> {
  const out = new Map<string, Set<string>>();
  const add = (table: string, column: string) => {
    const set = out.get(table) ?? new Set<string>();
    set.add(column);
    out.set(table, set);
  };
  if (options.engine === 'sqlite') {
    const Database = ((await importDriver('better-sqlite3')) as unknown as { default: BetterSqlite3 }).default;
    const db = new Database(options.db, { readonly: true, fileMustExist: true });
    try {
      const rows = db
        .prepare(
          `select m.name as t, p.name as c from sqlite_master m join pragma_table_info(m.name) p where m.type = 'table'`,
        )
        .all() as Array<{ t: string; c: string }>;
      for (const r of rows) add(r.t, r.c);
    } finally {
      db.close();
    }
    return out;
  }
  const mod = (await importDriver('pg')) as { default?: PgModule } & PgModule;
  const pg = mod.default ?? mod;
  const client = new pg.Client({ connectionString: options.db, options: '-c default_transaction_read_only=on' });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = (await client.query(
      'select table_name as t, column_name as c from information_schema.columns where table_schema = current_schema()',
    )) as { rows: Array<{ t: string; c: string }> };
    for (const r of rows) add(r.t, r.c);
  } finally {
    await client.end().catch(() => undefined);
  }
  return out;
}

export { FRAMEWORK_SCHEMAS };

/** A driver, loaded when a database needs it (the package's optional peers; untyped here). */
function importDriver(name: 'better-sqlite3' | 'pg'): Promise<unknown> {
  return import(name as string);
}
