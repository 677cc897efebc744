import { EntityGitError } from '@entity-git/core';
import { sql, type Kysely } from 'kysely';
import type { SqlEngine } from './engine.js';
import { resolveSchemaNames, type SchemaNames, type SchemaNamesInput } from './schema-names.js';
import type { ValueFormat, ValueFormats } from './value-formats.js';

export type ContractTable = keyof SchemaNames;

/** What {@link inspectSchema} found: the tables that exist, and the names to use with them. */
export interface SchemaInspection {
  /** The contract tables that exist in the database (under their mapped names). */
  present: ReadonlySet<ContractTable>;
  /**
   * The names to read and write with: the given ones, except that an optional column left at its
   * default name and absent from an existing table is `null` (it reads as null).
   */
  names: SchemaNames;
}

/** How a contract column is checked against the type it has in the database. */
export type Kind = 'any' | 'number' | 'value';

const KINDS: { [T in ContractTable]: Record<string, Kind> } = {
  projects: { id: 'any', name: 'any', workdir: 'any', status: 'any', description: 'any', created_at: 'number' },
  sessions: {
    id: 'any',
    title: 'any',
    agent_id: 'any',
    model: 'any',
    project_id: 'any',
    head: 'any',
    created_at: 'number',
    metadata: 'value',
  },
  nodes: {
    id: 'any',
    session_id: 'any',
    seq: 'number',
    role: 'any',
    content: 'value',
    predecessor: 'any',
    caller: 'any',
    created_at: 'number',
    metadata: 'value',
  },
};

const NULLABLE_DEFAULTED = new Set([
  'description',
  'title',
  'agent_id',
  'model',
  'project_id',
  'head',
  'metadata',
  'caller',
]);

/**
 * Reads the columns of the contract's tables (SQLite `pragma_table_info`, PostgreSQL
 * `pg_attribute` of the table the search_path resolves) and checks them against the names and formats: a table that
 * exists must have every mapped column, with a type that can hold what the contract puts there.
 * Only reads; a mismatch is `SCHEMA_MISMATCH` naming the table, the column and what was expected.
 * `requireTables` lists the tables that must exist (the others may be absent, to be created).
 */
export async function inspectSchema(
  db: Kysely<any>,
  {
    engine,
    names: input,
    formats,
    requireTables,
  }: {
    engine: SqlEngine;
    /** The names as the options gave them (undefined: the defaults). */
    names: SchemaNamesInput | undefined;
    formats: ValueFormats;
    requireTables: readonly ContractTable[];
  },
): Promise<SchemaInspection> {
  const names = resolveSchemaNames(input);
  const present = new Set<ContractTable>();
  // Every key of the names is kept (a table name other than the three is passed through as given).
  const adjusted = JSON.parse(JSON.stringify(names)) as Record<string, Record<string, string | null>>;
  for (const table of Object.keys(KINDS) as ContractTable[]) {
    const mapped = names[table] as unknown as Record<string, string | null>;
    const out = adjusted[table]!;
    const columns = await columnsOf(db, engine, mapped.table!);
    if (columns === null) {
      if (requireTables.includes(table)) {
        throw mismatch(`table ${JSON.stringify(mapped.table)} (the contract's ${table}) does not exist`, {
          table: mapped.table,
        });
      }
      continue;
    }
    present.add(table);
    const explicit = (input?.[table] ?? {}) as Record<string, unknown>;
    for (const [key, kind] of Object.entries(KINDS[table])) {
      const column = mapped[key];
      if (column === null || column === undefined) continue;
      const type = columns.get(column);
      if (type === undefined) {
        if (NULLABLE_DEFAULTED.has(key) && !(key in explicit)) {
          out[key] = null;
          continue;
        }
        throw mismatch(
          `table ${JSON.stringify(mapped.table)} has no column ${JSON.stringify(column)} (the contract's ${table}.${key}); ` +
            `map it with names.${table}.${key}${NULLABLE_DEFAULTED.has(key) ? ', or set it to null' : ''}`,
          { table: mapped.table, column, expected: key },
        );
      }
      const format = kind === 'value' ? formatOf(formats, table, key) : undefined;
      const problem = typeProblem(engine, kind, type, format);
      if (problem !== null) {
        throw mismatch(
          `column ${JSON.stringify(column)} of table ${JSON.stringify(mapped.table)} (the contract's ${table}.${key}) is ${JSON.stringify(type)}, expected ${problem}`,
          { table: mapped.table, column, expected: problem, found: type },
        );
      }
    }
  }
  return { present, names: resolveSchemaNames(adjusted as SchemaNamesInput) };
}

function formatOf(formats: ValueFormats, table: ContractTable, key: string): ValueFormat {
  if (table === 'nodes') return formats.nodes[key as 'content' | 'metadata'];
  return formats.sessions.metadata;
}

/** What the column should have been, or null when its type will do. */
export function typeProblem(
  engine: SqlEngine,
  kind: Kind,
  type: string,
  format: ValueFormat | undefined,
): string | null {
  const t = type.toLowerCase();
  if (engine === 'sqlite') {
    const affinity = sqliteAffinity(t);
    if (kind === 'number')
      return affinity === 'text'
        ? 'a number column (INTEGER or REAL): the contract keeps seq and times as numbers'
        : null;
    if (kind === 'value') {
      if (format === 'jsonb')
        return 'a PostgreSQL json/jsonb column for the format "jsonb" (on SQLite use "json" or "text")';
      return affinity === 'integer' || affinity === 'real'
        ? `a text column for the format ${JSON.stringify(format)}`
        : null;
    }
    return null;
  }
  const numeric = ['smallint', 'integer', 'bigint', 'real', 'double precision', 'numeric'];
  const textual = ['text', 'character varying', 'character', 'bpchar'];
  if (kind === 'number')
    return numeric.includes(t)
      ? null
      : `a number column (${numeric.join(', ')}): the contract keeps seq and times as numbers`;
  if (kind === 'value') {
    if (format === 'jsonb')
      return t === 'json' || t === 'jsonb' ? null : 'a json or jsonb column for the format "jsonb"';
    if (t === 'json' || t === 'jsonb')
      return `a text column for the format ${JSON.stringify(format)} (set the format to "jsonb" for a ${t} column)`;
    return textual.includes(t) ? null : `a text column for the format ${JSON.stringify(format)}`;
  }
  return null;
}

/** SQLite's column affinity from a declared type (https://sqlite.org/datatype3.html §3.1). */
function sqliteAffinity(type: string): 'integer' | 'text' | 'blob' | 'real' | 'numeric' {
  if (type.includes('int')) return 'integer';
  if (/char|clob|text/.test(type)) return 'text';
  if (type.includes('blob') || type === '') return 'blob';
  if (/real|floa|doub/.test(type)) return 'real';
  return 'numeric';
}

/** Column name → declared type, or null when the table does not exist. */
export async function columnsOf(
  db: Kysely<any>,
  engine: SqlEngine,
  table: string,
): Promise<Map<string, string> | null> {
  // A qualified name splits at its first dot, as kysely's `selectFrom` splits it.
  const dot = table.indexOf('.');
  const schema = dot < 0 ? null : table.slice(0, dot);
  const name = dot < 0 ? table : table.slice(dot + 1);
  let rows: { name: string; type: string }[];
  try {
    if (engine === 'sqlite') {
      rows = (
        await sql<{
          name: string;
          type: string;
        }>`select name, type from pragma_table_info(${name}, ${schema ?? 'main'})`.execute(db)
      ).rows;
    } else {
      // Resolved through the search_path, as the queries that read the table resolve it.
      rows = (
        await sql<{
          name: string;
          type: string;
        }>`select a.attname as name, format_type(a.atttypid, null) as type from pg_attribute a
        where a.attrelid = to_regclass(case when ${schema}::text is null then quote_ident(${name}::text) else quote_ident(${schema}::text) || '.' || quote_ident(${name}::text) end)
          and a.attnum > 0 and not a.attisdropped`.execute(db)
      ).rows;
    }
  } catch (err) {
    throw new EntityGitError(
      'DB_ERROR',
      `[sqlite] reading the columns of ${JSON.stringify(table)}: ${(err as Error).message}`,
      { table },
      { cause: err },
    );
  }
  return rows.length === 0 ? null : new Map(rows.map((r) => [r.name, r.type]));
}

function mismatch(message: string, data: Record<string, unknown>): EntityGitError<'SCHEMA_MISMATCH'> {
  return new EntityGitError('SCHEMA_MISMATCH', `[sqlite] ${message}; nothing was changed`, data);
}
