import type { Kysely } from 'kysely';
import { dbError, resolveEngine, type SqlEngine } from './engine.js';
import { migrateToLatest } from './migrations.js';
import { resolveSchemaNames, type SchemaNames, type SchemaNamesInput } from './schema-names.js';
import { SqlDagSource } from './sql-dag-source.js';
import { SqlDagWriter } from './sql-dag-writer.js';
import { SqlProjectStore } from './sql-project-store.js';

/** Name of the store {@link createSqlStore} makes over a caller's own Kysely instance. */
export const SQL_STORE_NAME = 'sql';

/** Options every store factory takes. */
export interface SqlStoreCommonOptions {
  /** Table and column names of an existing database (default: DESIGN.md §2's names). */
  names?: SchemaNamesInput;
  /**
   * Run the schema migrations on open (default: `true` with the default names, `false` when
   * `names` is given — a mapped database is the user's own, and we do not add tables to it
   * unasked; pass `true` to create the schema under the mapped names).
   */
  migrate?: boolean;
  /** Default page size of `dag.nodesAfter` (default 500). */
  batchSize?: number;
  /** The clock for default `created_at`s, in seconds since the epoch (default: `Date.now() / 1000`). */
  now?: () => number;
}

/** The DAG and projects of one database, with the handles that own it. */
export interface SqlStore {
  /** The factory that made it: `'sqlite'`, `'postgres'` or `'sql'`. */
  readonly name: string;
  readonly engine: SqlEngine;
  /** The Kysely instance, for queries of the application's own. */
  readonly db: Kysely<any>;
  readonly names: SchemaNames;
  /** The frozen options the store was made with. */
  readonly options: Readonly<Record<string, unknown>>;
  /** Read side: what the mirror follows. */
  readonly dag: SqlDagSource;
  /** Write side: what the dispatcher calls. */
  readonly writer: SqlDagWriter;
  readonly projects: SqlProjectStore;
  /** Closes what the factory opened (idempotent). `createSqlStore` leaves a caller's `db` open. */
  close(): Promise<void>;
}

export interface CreateSqlStoreOptions extends SqlStoreCommonOptions {
  /** A Kysely instance the caller owns (any SQLite or PostgreSQL dialect). */
  db: Kysely<any>;
  /** The engine, when it cannot be told from the dialect (default: detected). */
  engine?: SqlEngine;
}

/** A store over a Kysely instance the caller made; migrations run first unless turned off. */
export async function createSqlStore(options: CreateSqlStoreOptions): Promise<SqlStore> {
  const frozen = Object.freeze({ ...options });
  return assembleStore(SQL_STORE_NAME, frozen.db, frozen, async () => undefined);
}

/** Shared by the factories: resolve, migrate, build the three parts over one db. */
export async function assembleStore(
  name: string,
  db: Kysely<any>,
  options: Readonly<SqlStoreCommonOptions & { engine?: SqlEngine }>,
  release: () => Promise<void>,
): Promise<SqlStore> {
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= release());
  try {
    const engine = resolveEngine(db, options.engine);
    const names = resolveSchemaNames(options.names);
    if (options.migrate ?? options.names === undefined) {
      await migrateToLatest(db, { engine, names: options.names }).catch((err: unknown) => {
        throw dbError(err, 'migrating the schema');
      });
    }
    const common = { db, names: options.names, engine, now: options.now };
    return Object.freeze({
      name,
      engine,
      db,
      names,
      options,
      dag: new SqlDagSource({ db, names: options.names, batchSize: options.batchSize }),
      writer: new SqlDagWriter(common),
      projects: new SqlProjectStore(common),
      close,
    });
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
