import { EntityGitError } from '@entity-git/core';
import { Kysely, PostgresDialect, type KyselyConfig, type KyselyPlugin, type PostgresPool } from 'kysely';
import { assembleStore, type SqlStore, type SqlStoreCommonOptions } from './sql-store.js';

/** Name of the PostgreSQL store (`store.name`). */
export const POSTGRES_STORE_NAME = 'postgres';

export interface OpenPostgresOptions extends SqlStoreCommonOptions {
  /** `postgres://user:password@host:port/database` (any form `pg` accepts). */
  connectionString: string;
  /** Connections in the pool (default 10). */
  maxConnections?: number;
  /**
   * Every transaction read-only (`default_transaction_read_only`; the server refuses writes).
   * `migrate` then defaults to false. Default false — but a database read through a `mapping`
   * (given, or a known schema recognised) is always read this way.
   */
  readonly?: boolean;
  /** kysely plugins for the instance (instrumentation, naming). */
  plugins?: KyselyPlugin[];
  /** kysely's query log hook. */
  log?: KyselyConfig['log'];
}

// The slice of `pg` we use; `pg` is an optional peer dependency, loaded only here.
interface PgPool extends PostgresPool {
  on(event: 'error', listener: (err: Error) => void): unknown;
}
type PgModule = { Pool: new (config: { connectionString: string; max?: number; options?: string }) => PgPool };

/**
 * Connects to PostgreSQL through `pg` and returns the store, migrations run. The same schema and
 * the same code as SQLite; appends serialize on a row lock of their session.
 */
export async function openPostgres(options: OpenPostgresOptions): Promise<SqlStore> {
  const readonly = options.readonly === true;
  const frozen = Object.freeze({
    ...options,
    ...(readonly && options.migrate === undefined ? { migrate: false } : {}),
  });
  const { connectionString, maxConnections = 10 } = frozen;
  if (typeof connectionString !== 'string' || connectionString === '') {
    throw new EntityGitError('INVALID_OPTION', '[sqlite] connectionString must be a non-empty string');
  }
  if (!Number.isSafeInteger(maxConnections) || maxConnections < 1) {
    throw new EntityGitError('INVALID_OPTION', '[sqlite] maxConnections must be a positive integer', {
      maxConnections,
    });
  }
  let pg: PgModule;
  try {
    const mod = (await import('pg')) as unknown as { default?: PgModule } & PgModule;
    pg = mod.default ?? mod;
  } catch (err) {
    throw new EntityGitError(
      'INVALID_OPTION',
      '[sqlite] openPostgres needs the `pg` package installed',
      {},
      { cause: err },
    );
  }
  const pool = new pg.Pool({
    connectionString,
    max: maxConnections,
    ...(readonly ? { options: '-c default_transaction_read_only=on' } : {}),
  });
  // An idle client that loses its server emits 'error' on the pool, and an unheard 'error' kills
  // the process; the next query on a fresh client reports the problem instead.
  pool.on('error', () => undefined);
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }), plugins: frozen.plugins, log: frozen.log });
  const store = await assembleStore(POSTGRES_STORE_NAME, db, { ...frozen, engine: 'postgres' }, () => db.destroy());
  if (store.mapping === null || readonly) return store;
  // An application's database: from here the server itself refuses any write on the pool.
  await store.close();
  return openPostgres({ ...options, readonly: true });
}
