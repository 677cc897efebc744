import { EntityGitError, isEntityGitError } from '@entity-git/core';
import type { Kysely } from 'kysely';
import { dbError, resolveEngine, type SqlEngine } from './engine.js';
import { closestKnown, hasOwnSchema, readTables, recognise, tablesToRead } from './known-schemas/recognise.js';
import { isQueryMapping, parseMapping, type MappingInput } from './mapping/mapping-input.js';
import { resolveQueryMapping, type ResolvedQueryMapping } from './mapping/query-mapping.js';
import { NoProjectStore, ReadOnlyDagWriter } from './mapping/read-only-parts.js';
import { resolveMapping, type ResolvedMapping, type TableColumns } from './mapping/resolved-mapping.js';
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
  /** Table and column names of an existing database (default: the contract's names, `DEFAULT_SCHEMA_NAMES`). */
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
  /**
   * An application's own tables, read as they are — roles, content and metadata from columns or
   * JSON paths, a derived seq, tools and tokens (see `docs/app-databases.md`). Such a database is
   * never written: the writer and the projects refuse, and no migration runs. Not with `names`
   * for sessions or nodes, nor with `formats`.
   */
  mapping?: MappingInput;
  /**
   * Recognise the application schemas entity-git knows (`KNOWN_SCHEMAS`: `messages`, `flat-dag`)
   * by their tables and columns, and read such a database through its mapping, never writing it.
   * Default: on when neither `names` nor `mapping` is given. entity-git's own schema is always
   * read as such.
   */
  recognise?: boolean;
  /**
   * The clock for default `created_at`s and for the quiet time, in seconds since the epoch
   * (default: `Date.now() / 1000`).
   */
  now?: () => number;
  /**
   * With a mapping or a recognised schema: after how many ms a session whose newest row is older
   * is quiet, and the turns held open are committed (`SqlDagSourceOptions.quietMs`; default
   * `DEFAULT_QUIET_MS`, 5 minutes, as for transcripts; `Infinity`: never by time).
   */
  quietMs?: number;
}

/** The DAG and projects of one database, with the handles that own it. */
export interface SqlStore {
  /** The factory that made it: `'sqlite'`, `'postgres'` or `'sql'`. */
  readonly name: string;
  readonly engine: SqlEngine;
  /** The Kysely instance, for queries of the application's own. */
  readonly db: Kysely<any>;
  /** The names of entity-git's own tables (the defaults when `mapping` describes the database). */
  readonly names: SchemaNames;
  readonly formats: ValueFormats;
  /** The application's tables as read (the table form, or the query form), when the database is an application's own; else null. */
  readonly mapping: ResolvedMapping | ResolvedQueryMapping | null;
  /** The known schema the database was recognised as (`messages`, `flat-dag`), or null. */
  readonly recognised: string | null;
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
  options: Readonly<SqlStoreCommonOptions & { engine?: SqlEngine; readOnlyConnection?: boolean }>,
  release: () => Promise<void>,
): Promise<SqlStore> {
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= release());
  try {
    const engine = resolveEngine(db, options.engine);
    const chosen = await chooseMapping(db, engine, options);
    if (chosen.mapping !== null) return mappedStore({ name, db, engine, options, mapping: chosen.mapping, close });
    let names = resolveSchemaNames(options.names);
    const formats = resolveValueFormats(options.formats);
    const migrate = options.migrate ?? options.names === undefined;
    if (options.checkSchema ?? options.migrate !== false) {
      // Read before any write: a database that does not fit is refused unchanged.
      const found = await inspectSchema(db, {
        engine,
        names: options.names,
        formats,
        requireTables: migrate ? [] : ['sessions', 'nodes'],
      }).catch(async (err: unknown) => {
        throw options.names === undefined ? await withClosestKnown(err, db, engine, chosen.tables) : err;
      });
      names = found.names;
      if (migrate) {
        if (chosen.tables !== null) refuseNearKnown(chosen.tables);
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
      mapping: null,
      recognised: null,
      options,
      dag: new SqlDagSource({
        db,
        names,
        formats,
        batchSize: options.batchSize,
        engine,
        readOnlyConnection: options.readOnlyConnection,
      }),
      writer: new SqlDagWriter(common),
      projects: new SqlProjectStore(common),
      close,
    });
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}

/**
 * The mapping a database is read through: the one given, or a known schema recognised (when
 * neither `names` nor `mapping` is given and the database does not hold entity-git's own
 * `nodes`); null for entity-git's own schema. Reads the catalogue only.
 */
async function chooseMapping(
  db: Kysely<any>,
  engine: SqlEngine,
  options: Readonly<SqlStoreCommonOptions>,
): Promise<{ mapping: ResolvedMapping | ResolvedQueryMapping | null; tables: TableColumns | null }> {
  if (options.mapping !== undefined) {
    if (options.names?.sessions !== undefined || options.names?.nodes !== undefined)
      throw invalid('mapping describes the sessions and nodes tables: leave names.sessions and names.nodes out');
    if (options.formats !== undefined) throw invalid('mapping says how each value is read: leave formats out');
    if (options.migrate === true)
      throw invalid("migrate cannot be true with a mapping: an application's database is never changed");
    const input = parseMapping(options.mapping);
    if (isQueryMapping(input)) return { mapping: await resolveQueryMapping(db, engine, input), tables: null };
    const tables = await readTables(db, engine, [input.sessions.table, input.nodes.table]);
    return { mapping: resolveMapping(input, tables, { engine }), tables };
  }
  if (options.names !== undefined || options.recognise === false) return { mapping: null, tables: null };
  const tables = await readTables(db, engine, tablesToRead());
  const known = hasOwnSchema(tables) ? null : recognise(tables, engine);
  if (known === null) return { mapping: null, tables };
  if (isQueryMapping(known.mapping))
    return { mapping: await resolveQueryMapping(db, engine, known.mapping, known.name), tables };
  return { mapping: resolveMapping(known.mapping, tables, { engine, schema: known.name }), tables };
}

/** A store over an application's own tables: read through the mapping, every write refused. */
function mappedStore({
  name,
  db,
  engine,
  options,
  mapping,
  close,
}: {
  name: string;
  db: Kysely<any>;
  engine: SqlEngine;
  options: Readonly<SqlStoreCommonOptions & { readOnlyConnection?: boolean }>;
  mapping: ResolvedMapping | ResolvedQueryMapping;
  close: () => Promise<void>;
}): SqlStore {
  const names = resolveSchemaNames();
  const formats = resolveValueFormats();
  const common = { db, names, formats, engine, now: options.now };
  return Object.freeze({
    name,
    engine,
    db,
    names,
    formats,
    mapping,
    recognised: mapping.schema,
    options,
    dag: new SqlDagSource({
      db,
      names,
      formats,
      batchSize: options.batchSize,
      mapping,
      engine,
      readOnlyConnection: options.readOnlyConnection,
      quietMs: options.quietMs,
      now: options.now,
    }),
    writer: new ReadOnlyDagWriter(common),
    projects: new NoProjectStore(common),
    close,
  });
}

/**
 * A `SCHEMA_MISMATCH` of entity-git's own schema, told also what the database is nearest to: the
 * known schema with most of its columns present, or the configuration keys to set.
 */
async function withClosestKnown(
  err: unknown,
  db: Kysely<any>,
  engine: SqlEngine,
  read: TableColumns | null,
): Promise<unknown> {
  if (!isEntityGitError(err, 'SCHEMA_MISMATCH')) return err;
  const tables = read ?? (await readTables(db, engine, tablesToRead()).catch(() => null));
  const near = tables === null ? null : closestKnown(tables);
  const hint =
    near !== null && near.matched * 2 >= near.total
      ? `the closest known schema is ${JSON.stringify(near.schema)} (${near.matched} of its ${near.total} columns; missing ${near.missing.join(', ')}); a variant of it is read with a "mapping" in the config`
      : 'describe the tables with "names" (other names) or "mapping" (other shapes) in the config';
  const message = err.message.replace(/^\[entity-git\] /, '');
  return new EntityGitError('SCHEMA_MISMATCH', `${message}; ${hint}`, { ...err.data, closest: near }, { cause: err });
}

/**
 * Before entity-git creates its missing tables in a database: one that is near a known
 * application schema (half its columns or more) is an application's variant, not a database to
 * add entity-git's tables to. Refused, nothing created; its mapping is the way to read it.
 */
function refuseNearKnown(tables: TableColumns): void {
  if (hasOwnSchema(tables)) return;
  const near = closestKnown(tables);
  if (near === null || near.matched * 2 < near.total) return;
  throw new EntityGitError(
    'SCHEMA_MISMATCH',
    `[sqlite] the database looks like an application's (the closest known schema is ${JSON.stringify(near.schema)}: ${near.matched} of its ${near.total} columns; missing ${near.missing.join(', ')}), not entity-git's, so its tables are not added; nothing was changed; read it with a "mapping" in the config`,
    { closest: near },
  );
}

function invalid(message: string): EntityGitError<'INVALID_OPTION'> {
  return new EntityGitError('INVALID_OPTION', `[sqlite] ${message}`);
}
