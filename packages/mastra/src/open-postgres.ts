import { EntityGitError } from '@entity-git/core';
import { Kysely, PostgresDialect, type PostgresPool } from 'kysely';
import { MastraDag, type MastraDagOptions } from './mastra-dag.js';
import { assembleStore, MASTRA_POSTGRES_NAME, type MastraStore } from './mastra-store.js';

export interface OpenMastraPostgresOptions extends Omit<MastraDagOptions, 'db'> {
  /** `postgres://user:password@host:port/database`, as given to Mastra's `PostgresStore`. */
  connectionString: string;
  /** Connections in the pool (default 4). */
  maxConnections?: number;
}

// The slice of `pg` used here; `pg` is an optional peer dependency, loaded only here.
interface PgPool extends PostgresPool {
  on(event: 'error', listener: (err: Error) => void): unknown;
}
type PgModule = {
  Pool: new (config: { connectionString: string; max?: number; options?: string }) => PgPool;
};

/**
 * Connects to the PostgreSQL database of Mastra's `PostgresStore` and returns its store. Every
 * connection is opened with `default_transaction_read_only = on`, so the server itself refuses
 * any write made through it.
 */
export async function openMastraPostgres(options: OpenMastraPostgresOptions): Promise<MastraStore> {
  const frozen = Object.freeze({ ...options });
  const { connectionString, maxConnections = 4, ...rest } = frozen;
  if (typeof connectionString !== 'string' || connectionString === '')
    throw new EntityGitError('INVALID_OPTION', '[mastra] connectionString must be a non-empty string');
  if (!Number.isSafeInteger(maxConnections) || maxConnections < 1)
    throw new EntityGitError('INVALID_OPTION', '[mastra] maxConnections must be a positive integer', {
      maxConnections,
    });
  let pg: PgModule;
  try {
    const mod = (await import('pg')) as unknown as { default?: PgModule } & PgModule;
    pg = mod.default ?? mod;
  } catch (err) {
    throw new EntityGitError(
      'INVALID_OPTION',
      '[mastra] openMastraPostgres needs the `pg` package installed (an optional peer dependency)',
      {},
      { cause: err },
    );
  }
  const pool = new pg.Pool({
    connectionString,
    max: maxConnections,
    options: '-c default_transaction_read_only=on',
  });
  // An idle client that loses its server emits 'error' on the pool, and an unheard 'error' kills
  // the process; the next query on a fresh client reports the problem instead.
  pool.on('error', () => undefined);
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  try {
    return assembleStore(MASTRA_POSTGRES_NAME, db, new MastraDag({ ...rest, db }));
  } catch (err) {
    await db.destroy();
    throw err;
  }
}
