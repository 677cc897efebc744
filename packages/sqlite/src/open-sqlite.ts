import { closeSync, openSync } from 'node:fs';
import { EntityGitError } from '@entity-git/core';
import { Kysely, SqliteDialect, type KyselyConfig, type KyselyPlugin, type SqliteDatabase } from 'kysely';
import { registerRowsChecksum, type AggregateHost } from './markers/rows-checksum.js';
import { assembleStore, type SqlStore, type SqlStoreCommonOptions } from './sql-store.js';

/** Name of the default engine's store (`store.name`). */
export const SQLITE_STORE_NAME = 'sqlite';
/** How long a writer waits for another process's write lock before SQLITE_BUSY (ms). */
export const DEFAULT_BUSY_TIMEOUT_MS = 10_000;

export interface OpenSqliteOptions extends SqlStoreCommonOptions {
  /** Path of the database file, created when missing (its directory must exist); `:memory:` for a private one. */
  file: string;
  /** Busy timeout in ms (default {@link DEFAULT_BUSY_TIMEOUT_MS}). */
  busyTimeoutMs?: number;
  /**
   * Open the file read-only (SQLite refuses any write on the connection; the file must exist).
   * `migrate` then defaults to false. Default false — but a database read through a `mapping`
   * (given, or a known schema recognised) is always opened read-only.
   */
  readonly?: boolean;
  /** kysely plugins for the instance (instrumentation, naming). */
  plugins?: KyselyPlugin[];
  /** kysely's query log hook. */
  log?: KyselyConfig['log'];
}

// The slice of better-sqlite3 we use, so our types do not need @types/better-sqlite3.
interface BetterSqlite3Database extends SqliteDatabase, AggregateHost {
  pragma(source: string, options?: { simple?: boolean }): unknown;
  prepare(sql: string): { get(...params: unknown[]): unknown } & ReturnType<SqliteDatabase['prepare']>;
}
type BetterSqlite3 = new (
  filename: string,
  options?: { timeout?: number; readonly?: boolean; fileMustExist?: boolean },
) => BetterSqlite3Database;

/**
 * Opens (creating if needed) a SQLite database file with better-sqlite3 and returns its store:
 * WAL (readers never wait for the writer), a busy timeout, foreign keys on, migrations run.
 * Several processes may open one file; their writes serialize on SQLite's write lock.
 */
export async function openSqlite(options: OpenSqliteOptions): Promise<SqlStore> {
  // A configured mapping names an application's database, which is never written (nor created).
  const readonly = options.readonly === true || options.mapping !== undefined;
  const frozen = Object.freeze({
    ...options,
    ...(readonly && options.migrate === undefined ? { migrate: false } : {}),
  });
  const { file, busyTimeoutMs = DEFAULT_BUSY_TIMEOUT_MS } = frozen;
  if (typeof file !== 'string' || file === '')
    throw new EntityGitError('INVALID_OPTION', '[sqlite] file must be a non-empty path');
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new EntityGitError('INVALID_OPTION', '[sqlite] busyTimeoutMs must be a non-negative integer', {
      busyTimeoutMs,
    });
  }
  const database = await openConnection(
    file,
    busyTimeoutMs,
    readonly,
    !readonly && (frozen.migrate ?? frozen.names === undefined),
  );
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database }), plugins: frozen.plugins, log: frozen.log });
  const store = await assembleStore(
    SQLITE_STORE_NAME,
    db,
    { ...frozen, engine: 'sqlite', readOnlyConnection: readonly },
    () => db.destroy(),
  );
  if (store.mapping === null || readonly || file === ':memory:' || file === '') return store;
  // An application's database: nothing was written to find that out; from here SQLite itself
  // refuses any write on the connection.
  await store.close();
  return openSqlite({ ...options, readonly: true });
}

/**
 * A database file this call creates is made `0600` first, whatever the umask: it holds every
 * conversation. SQLite gives its `-wal` and `-shm` files the main file's mode. A file that exists
 * keeps its mode (the user's choice, or another application's database).
 */
function createPrivately(file: string): void {
  if (file === ':memory:' || file === '' || file.startsWith('file:')) return;
  try {
    closeSync(openSync(file, 'wx', 0o600));
  } catch {
    // EEXIST: the file is there; anything else (no such directory…): SQLite's open says it.
  }
}

/**
 * A better-sqlite3 connection to `file`, set up: WAL on a file the schema is about to be created
 * in (`createsSchema` and no table yet), foreign keys on, the rows checksum registered.
 */
async function openConnection(
  file: string,
  busyTimeoutMs: number,
  readonly: boolean,
  createsSchema: boolean,
): Promise<BetterSqlite3Database> {
  // Loaded on demand: a user of openPostgres alone never needs the native module.
  let Database: BetterSqlite3;
  try {
    Database = ((await import('better-sqlite3')) as unknown as { default: BetterSqlite3 }).default;
  } catch (err) {
    throw new EntityGitError(
      'INVALID_OPTION',
      '[sqlite] openSqlite needs the `better-sqlite3` package installed (an optional peer dependency)',
      { file },
      { cause: err },
    );
  }
  if (!readonly) createPrivately(file);
  let database: BetterSqlite3Database;
  try {
    database = new Database(
      file,
      readonly ? { timeout: busyTimeoutMs, readonly, fileMustExist: true } : { timeout: busyTimeoutMs },
    );
  } catch (err) {
    throw new EntityGitError(
      'DB_ERROR',
      `[sqlite] cannot open ${JSON.stringify(file)}: ${(err as Error).message}`,
      { file },
      { cause: err },
    );
  }
  try {
    // The journal mode is the file's own, kept by SQLite: it is set once, on a file that holds no
    // table yet and that we are about to create the schema in. A database another program made
    // keeps its mode (switching writes to the file, and a read-only command writes nothing).
    const fresh = createsSchema && (database.prepare('select count(*) as n from sqlite_master').get() as { n: number });
    // Switching to WAL takes the write lock briefly. SQLite may answer SQLITE_BUSY at once there,
    // without waiting out the busy timeout (several processes opening a new file together do
    // that): the switch is tried again until the timeout has passed.
    for (const deadline = Date.now() + busyTimeoutMs; fresh !== false && fresh.n === 0; ) {
      try {
        database.pragma('journal_mode = WAL');
        break;
      } catch (err) {
        if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw err;
        await new Promise((r) => setTimeout(r, 10 + Math.random() * 40));
      }
    }
    database.pragma('foreign_keys = ON');
    // On the connection, not in the file: the change markers of a database without triggers.
    registerRowsChecksum(database);
  } catch (err) {
    database.close();
    throw new EntityGitError(
      'DB_ERROR',
      `[sqlite] cannot set up ${JSON.stringify(file)}: ${(err as Error).message}`,
      { file },
      { cause: err },
    );
  }
  return database;
}
