import type { Kysely } from 'kysely';
import { dbError, resolveEngine, type SqlEngine } from './engine.js';
import { migrateToLatest } from './migrations.js';
import { inspectSchema } from './schema-inspect.js';
import { resolveSchemaNames, type SchemaNames, type SchemaNamesInput } from './schema-names.js';
import { resolveValueFormats, type ValueFormats, type ValueFormatsInput } from './value-formats.js';
import { SqlDagSource } from './sql-dag-source.js';
import { SqlDagWriter } from './sql-dag-writer.js';
import { SqlProjectStore } from './sql-project-store.js';

/** Name of the store {@link createSqlStore} makes over a caller's own Kysely instance. */
export const SQL_STORE_NAME = 'sql';

/** Options every store factory takes. */
export interface SqlStoreCommonOptions {
  /** Table and column names of an existing database (default: DESIGN.md §2's names). */
  names?: SchemaNamesInput;
  /** How `content` and `metadata` are stored: `json` text (default), plain `text`, PostgreSQL `jsonb`. */
  formats?: ValueFormatsInput;
  /**
   * Run the schema migrations on open (default: `true` with the default names, `false` when
   * `names` is given — a mapped database is the user's own, and we do not add tables to it
   * unasked; pass `true` to create the schema under the mapped names). Tables that exist already
   * and fit the contract are adopted as they are: only the tables that are missing are created,
   * and the migration state goes into entity-git's own `entity_git_migration` table.
   */
  migrate?: boolean;
  /**
   * Check the existing tables' columns against the names and formats on open, before anything
   * is written (default: `true` unless `migrate` is `false`). Without migrations, `sessions` and
   * `nodes` must exist. A mismatch is `SCHEMA_MISMATCH`; optional columns absent from an existing
   * table (and not named explicitly) read as null.
   */
  checkSchema?: boolean;
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
  readonly formats: ValueFormats;
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
    let names = resolveSchemaNames(options.names);
    const formats = resolveValueFormats(options.formats);
    const migrate = options.migrate ?? options.names === undefined;
    if (options.checkSchema ?? options.migrate !== false) {
      // Read before any write: a database that does not fit is refused unchanged.
      const found = await inspectSchema(db, engine, options.names, formats, migrate ? [] : ['sessions', 'nodes']);
      names = found.names;
      if (migrate) {
        await migrateToLatest(db, { engine, names, present: found.present, formats }).catch((err: unknown) => {
          throw dbError(err, 'migrating the schema');
        });
      }
    } else if (migrate) {
      await migrateToLatest(db, { engine, names, formats }).catch((err: unknown) => {
        throw dbError(err, 'migrating the schema');
      });
    }
    const common = { db, names, formats, engine, now: options.now };
    return Object.freeze({
      name,
      engine,
      db,
      names,
      formats,
      options,
      dag: new SqlDagSource({ db, names, formats, batchSize: options.batchSize, engine }),
      writer: new SqlDagWriter(common),
      projects: new SqlProjectStore(common),
      close,
    });
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
