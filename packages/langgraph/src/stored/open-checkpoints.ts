import { EntityGitError } from '@entity-git/core';
import { Kysely, PostgresDialect, SqliteDialect, type PostgresPool, type SqliteDatabase } from 'kysely';
import { createLangGraphDag, type LangGraphDag } from '../langgraph-dag.js';
import { TypedDecoder } from '../python/typed-decoder.js';
import { StoredCheckpoints, type CheckpointLayout } from './stored-checkpoints.js';

/** A read-only connection to a LangGraph checkpoint database, and its DAG source. */
export interface CheckpointStore {
  /** `'sqlite'` or `'postgres'`: how the checkpoints are laid out. */
  readonly layout: CheckpointLayout;
  /** The Kysely it reads through. */
  readonly db: Kysely<any>;
  /** The tables as a checkpoint lister (what the DAG reads; also each thread's newest checkpoint). */
  readonly checkpoints: StoredCheckpoints;
  /** The `DagSource` to give the mirror: every thread, in the order they began. */
  readonly dag: LangGraphDag;
  /** Closes the connection; idempotent. */
  close(): Promise<void>;
}

export interface OpenCheckpointsCommon {
  /** The state's channel holding the conversation (default `'messages'`). */
  channel?: string;
  /** Called once per Python type the decoder cannot read (its values are kept, see the README). */
  onUnknownType?: (type: string) => void;
}

export interface OpenCheckpointsSqliteOptions extends OpenCheckpointsCommon {
  /** The SQLite file of `SqliteSaver` (Python's `langgraph-checkpoint-sqlite` or LangGraph.js's); it must exist. */
  file: string;
}

export interface OpenCheckpointsPostgresOptions extends OpenCheckpointsCommon {
  /** The database of `PostgresSaver` (Python's `langgraph-checkpoint-postgres` or LangGraph.js's). */
  connectionString: string;
}

type BetterSqlite3 = new (
  filename: string,
  options?: { readonly?: boolean; fileMustExist?: boolean; timeout?: number },
) => SqliteDatabase;

type PgModule = {
  Pool: new (config: {
    connectionString: string;
    max?: number;
    options?: string;
  }) => PostgresPool & {
    on(event: 'error', listener: (err: Error) => void): unknown;
  };
};

/**
 * Opens a LangGraph SQLite checkpoint file **read-only** (better-sqlite3's `readonly`: SQLite
 * refuses any write on the connection).
 */
export async function openCheckpointsSqlite(options: OpenCheckpointsSqliteOptions): Promise<CheckpointStore> {
  const { file, ...rest } = Object.freeze({ ...options });
  if (typeof file !== 'string' || file === '')
    throw new EntityGitError('INVALID_OPTION', '[langgraph] file must be a non-empty path');
  const Database = ((await load('better-sqlite3')) as { default: BetterSqlite3 }).default;
  let database: SqliteDatabase;
  try {
    database = new Database(file, { readonly: true, fileMustExist: true, timeout: 10_000 });
  } catch (err) {
    throw new EntityGitError(
      'DB_ERROR',
      `[langgraph] cannot open ${JSON.stringify(file)} read-only: ${(err as Error).message}`,
      { file },
      { cause: err },
    );
  }
  return assemble('sqlite', new Kysely<any>({ dialect: new SqliteDialect({ database }) }), rest);
}

/**
 * Connects to a LangGraph PostgreSQL checkpoint database with `default_transaction_read_only =
 * on`: the server refuses any write made through it.
 */
export async function openCheckpointsPostgres(options: OpenCheckpointsPostgresOptions): Promise<CheckpointStore> {
  const { connectionString, ...rest } = Object.freeze({ ...options });
  if (typeof connectionString !== 'string' || connectionString === '')
    throw new EntityGitError('INVALID_OPTION', '[langgraph] connectionString must be a non-empty string');
  const mod = (await load('pg')) as { default?: PgModule } & PgModule;
  const pg = mod.default ?? mod;
  const pool = new pg.Pool({ connectionString, max: 4, options: '-c default_transaction_read_only=on' });
  // An idle client losing its server emits 'error' on the pool; the next query reports it instead.
  pool.on('error', () => undefined);
  return assemble('postgres', new Kysely<any>({ dialect: new PostgresDialect({ pool }) }), rest);
}

function assemble(layout: CheckpointLayout, db: Kysely<any>, options: OpenCheckpointsCommon): CheckpointStore {
  const decoder = new TypedDecoder(options.onUnknownType ? { onUnknownType: options.onUnknownType } : {});
  const checkpoints = new StoredCheckpoints({ db, layout, decoder });
  const dag = createLangGraphDag({
    saver: checkpoints,
    threads: () => checkpoints.threadIds(),
    ...(options.channel !== undefined ? { channel: options.channel } : {}),
  });
  let closing: Promise<void> | null = null;
  return Object.freeze({ layout, db, checkpoints, dag, close: () => (closing ??= db.destroy()) });
}

async function load(name: 'better-sqlite3' | 'pg'): Promise<unknown> {
  try {
    // The drivers are optional peers, loaded only by the opener that needs one (never in a browser).
    return await import(/* @vite-ignore */ name);
  } catch (err) {
    throw new EntityGitError(
      'INVALID_OPTION',
      `[langgraph] reading a checkpoint database needs the \`${name}\` package installed (an optional peer dependency)`,
      {},
      { cause: err },
    );
  }
}
