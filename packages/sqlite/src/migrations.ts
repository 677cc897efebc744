import { EntityGitError } from '@entity-git/core';
import type { CreateTableBuilder, Kysely } from 'kysely';
import { loadMigrator, type Migration, type MigratorLike } from './kysely-migrator.js';
import { createChangeMarks } from './markers/revision-marks.js';
import { resolveEngine, writeTransaction, type SqlEngine } from './engine.js';
import type { ContractTable } from './schema-inspect.js';
import { DEFAULT_VALUE_FORMATS, type ValueFormat, type ValueFormats } from './value-formats.js';
import { resolveSchemaNames, type SchemaNames, type SchemaNamesInput } from './schema-names.js';

/**
 * Our bookkeeping tables. Not kysely's defaults: an application that runs its own kysely
 * migrations on the same database must not see ours as its own (kysely refuses to run when the
 * table lists a migration it does not know).
 */
export const MIGRATION_TABLE = 'entity_git_migration';
export const MIGRATION_LOCK_TABLE = 'entity_git_migration_lock';

/**
 * The versioned migrations of the schema, in order (kysely runs them sorted by name). A schema
 * change is a new entry with a later name, never an edit of a shipped one: a file migrated by an
 * older version then gets exactly the steps it lacks.
 */
export function schemaMigrations(
  engine: SqlEngine,
  names: SchemaNames,
  present: ReadonlySet<ContractTable> = new Set(),
  formats: ValueFormats = DEFAULT_VALUE_FORMATS,
): Record<string, Migration> {
  return {
    '0001_initial': { up: (db) => createInitialSchema(db, { engine, names, present, formats }) },
    // Triggers only on tables entity-git made in this run: an adopted database is never altered
    // (its sessions have no marker, so every check of them is the full one).
    '0002_change_marks': {
      up: async (db) =>
        present.has('sessions') || present.has('nodes') ? undefined : createChangeMarks(db, engine, names),
    },
  };
}

/**
 * Creates the default schema's tables (README, 'Schema and migrations') that are not `present`. A present table is the
 * application's own (checked compatible by `inspectSchema`): it is adopted as it is, with no
 * DDL on it, not even an index.
 */
async function createInitialSchema(
  db: Kysely<any>,
  {
    engine,
    names,
    present,
    formats,
  }: { engine: SqlEngine; names: SchemaNames; present: ReadonlySet<ContractTable>; formats: ValueFormats },
): Promise<void> {
  // PostgreSQL's `real` is a 4-byte float: seconds since 1970 would keep about 7 digits. SQLite's
  // REAL is already an 8-byte double.
  const seconds = engine === 'postgres' ? 'double precision' : 'real';
  // A `jsonb` value column is created as one; `json` and `text` values live in text columns.
  const value = (f: ValueFormat) => (f === 'jsonb' ? 'jsonb' : 'text');
  const types: ColumnTypes = {
    seconds,
    sessionMetadata: value(formats.sessions.metadata),
    nodeContent: value(formats.nodes.content),
    nodeMetadata: value(formats.nodes.metadata),
  };
  if (!present.has('projects')) await createProjects(db, names.projects, seconds);
  if (!present.has('sessions')) await createSessions(db, names, types);
  if (!present.has('nodes')) await createNodes(db, names, types);
}

/** The SQL types of the created columns that depend on the engine or the value formats. */
interface ColumnTypes {
  seconds: 'double precision' | 'real';
  sessionMetadata: 'text' | 'jsonb';
  nodeContent: 'text' | 'jsonb';
  nodeMetadata: 'text' | 'jsonb';
}

const optional = <T extends CreateTableBuilder<any, any>>(t: T, column: string | null, type: 'text' | 'jsonb'): T =>
  (column === null ? t : t.addColumn(column, type)) as T;

async function createProjects(
  db: Kysely<any>,
  P: SchemaNames['projects'],
  seconds: 'double precision' | 'real',
): Promise<void> {
  let projects = db.schema
    .createTable(P.table)
    .addColumn(P.id, 'text', (c) => c.primaryKey())
    .addColumn(P.name, 'text', (c) => c.notNull())
    .addColumn(P.workdir, 'text', (c) => c.notNull())
    .addColumn(P.status, 'text', (c) => c.notNull());
  projects = optional(projects, P.description, 'text');
  await projects.addColumn(P.created_at, seconds, (c) => c.notNull()).execute();
  // Not in the contract's schema, but the store refuses duplicate names, and only an index makes
  // that refusal hold between two processes creating the same name at once.
  await db.schema.createIndex(indexName(P.table, 'name_unique')).on(P.table).column(P.name).unique().execute();
}

async function createSessions(db: Kysely<any>, names: SchemaNames, types: ColumnTypes): Promise<void> {
  const { sessions: S, projects: P } = names;
  const { seconds, sessionMetadata: metadata } = types;
  let sessions = db.schema.createTable(S.table).addColumn(S.id, 'text', (c) => c.primaryKey());
  sessions = optional(sessions, S.title, 'text');
  sessions = optional(sessions, S.agent_id, 'text');
  sessions = optional(sessions, S.model, 'text');
  if (S.project_id !== null)
    sessions = sessions.addColumn(S.project_id, 'text', (c) => c.references(`${P.table}.${P.id}`));
  sessions = optional(sessions, S.head, 'text');
  sessions = sessions.addColumn(S.created_at, seconds, (c) => c.notNull());
  sessions = optional(sessions, S.metadata, metadata);
  await sessions.execute();
  if (S.project_id !== null) {
    await db.schema.createIndex(indexName(S.table, 'project_id_idx')).on(S.table).column(S.project_id).execute();
  }
}

async function createNodes(db: Kysely<any>, names: SchemaNames, types: ColumnTypes): Promise<void> {
  const { nodes: N, sessions: S } = names;
  const { seconds, nodeContent: content, nodeMetadata: metadata } = types;
  let nodes = db.schema
    .createTable(N.table)
    .addColumn(N.id, 'text', (c) => c.primaryKey())
    .addColumn(N.session_id, 'text', (c) => c.notNull().references(`${S.table}.${S.id}`))
    .addColumn(N.seq, 'integer', (c) => c.notNull())
    .addColumn(N.role, 'text', (c) => c.notNull())
    .addColumn(N.content, content)
    .addColumn(N.predecessor, 'text');
  nodes = optional(nodes, N.caller, 'text');
  nodes = nodes.addColumn(N.created_at, seconds, (c) => c.notNull());
  nodes = optional(nodes, N.metadata, metadata);
  // The unique constraint is itself an index on (session_id, seq), in SQLite and PostgreSQL alike;
  // it serves the `nodes(session_id, seq)` index of §2 (the pager's keyset query) without a twin.
  await nodes.addUniqueConstraint(indexName(N.table, 'session_seq_unique'), [N.session_id, N.seq]).execute();
  if (N.caller !== null)
    await db.schema.createIndex(indexName(N.table, 'caller_idx')).on(N.table).column(N.caller).execute();
  await db.schema.createIndex(indexName(N.table, 'predecessor_idx')).on(N.table).column(N.predecessor).execute();
}

/** An index name from the table's unqualified name: indexes live in their table's schema. */
function indexName(table: string, suffix: string): string {
  const base = table.slice(table.lastIndexOf('.') + 1).replace(/[^A-Za-z0-9_]/g, '_');
  return `${base}_${suffix}`;
}

/**
 * Brings a database to the latest schema; returns the names of the migrations it ran (none when
 * the database is current). Safe to call on every open and from several processes at once: on
 * SQLite the migrations run inside one `BEGIN IMMEDIATE` transaction (a second process waits,
 * then finds nothing to do), on PostgreSQL under kysely's advisory lock in one transaction.
 */
export async function migrateToLatest(
  db: Kysely<any>,
  options: {
    engine?: SqlEngine;
    names?: SchemaNamesInput;
    present?: ReadonlySet<ContractTable>;
    formats?: ValueFormats;
  } = {},
): Promise<string[]> {
  const engine = resolveEngine(db, options.engine);
  return applyMigrations(
    db,
    engine,
    schemaMigrations(engine, resolveSchemaNames(options.names), options.present, options.formats),
  );
}

/** Runs the given migrations up to the last one; the mechanism behind {@link migrateToLatest}. */
export async function applyMigrations(
  db: Kysely<any>,
  engine: SqlEngine,
  migrations: Record<string, Migration>,
): Promise<string[]> {
  const Migrator = await loadMigrator();
  const provider = { getMigrations: async () => migrations };
  const migrator = (on: Kysely<any>) =>
    new Migrator({
      db: on,
      provider,
      migrationTableName: MIGRATION_TABLE,
      migrationLockTableName: MIGRATION_LOCK_TABLE,
    });
  const run = async (m: MigratorLike): Promise<string[]> => {
    const { error, results = [] } = await m.migrateToLatest();
    if (error !== undefined) {
      const failed = results.find((r) => r.status === 'Error')?.migrationName;
      throw new EntityGitError(
        'DB_ERROR',
        `[sqlite] migration ${failed ?? '(setup)'} failed: ${error instanceof Error ? error.message : String(error)}`,
        { migration: failed },
        { cause: error },
      );
    }
    return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
  };
  if (engine !== 'sqlite') return run(migrator(db));
  // kysely's SQLite adapter takes no lock between processes (it assumes one connection, one
  // process); ours is the database write lock. Checked first so an up-to-date file costs one read
  // and no write lock on open.
  const pending = (await migrator(db).getMigrations()).some((m) => m.executedAt === undefined);
  if (!pending) return [];
  return writeTransaction(db, 'sqlite', (conn) => run(migrator(conn)));
}
