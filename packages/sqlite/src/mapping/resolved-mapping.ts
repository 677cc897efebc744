import { deepFreeze } from '../config-check.js';
import { EntityGitError, type Role } from '@entity-git/core';
import type { SqlEngine } from '../engine.js';
import { typeProblem } from '../schema-inspect.js';
import type { TableMappingInput as MappingInput, TimeInput, ValueSource, ValueSpec } from './mapping-input.js';
import type { TimeFormat } from './time-values.js';

/** A value of a row: a column, and the keys of a path into its JSON (empty: the column itself). */
export interface ResolvedSpec {
  readonly column: string;
  readonly path: readonly string[];
}

/** Specs tried in order; the first non-null value wins. Empty: the field reads as null. */
export type ResolvedSource = readonly ResolvedSpec[];

export interface ResolvedSessionsMapping {
  readonly table: string;
  readonly id: string;
  readonly created_at: string;
  /** How `created_at` is stored. */
  readonly createdFormat: TimeFormat;
  /** Where the head is read (empty: the session has none). */
  readonly head: ResolvedSource;
  readonly title: ResolvedSource;
  readonly agent_id: ResolvedSource;
  readonly model: ResolvedSource;
  readonly project_id: ResolvedSource;
  readonly metadata: ResolvedSource;
  /** Columns parsed as JSON text where they are read. */
  readonly json: readonly string[];
  /** Every column a session read selects, in the table's order. */
  readonly columns: readonly string[];
}

/** `seq` read from a column (`seq = value + shift`) or derived: the rank by `column`, then by id. */
export type ResolvedSeq =
  | { readonly kind: 'column'; readonly column: string; readonly shift: 0 | 1 }
  | { readonly kind: 'rank'; readonly column: string };

export interface ResolvedNodesMapping {
  readonly table: string;
  readonly id: string;
  readonly session_id: string;
  readonly created_at: string;
  /** How `created_at` is stored. */
  readonly createdFormat: TimeFormat;
  readonly predecessor: string | null;
  /** No predecessor column: each row continues the one before it in the session's order. */
  readonly linear: boolean;
  readonly caller: string | null;
  readonly seq: ResolvedSeq;
  readonly role: { readonly from: ResolvedSource; readonly values: Readonly<Record<string, Role>> };
  readonly content: ResolvedSource;
  readonly tool: ResolvedSource;
  readonly tokens: ResolvedSource;
  readonly inlineTools: {
    readonly from: ResolvedSource;
    readonly name: readonly (readonly string[])[];
    /** Key paths of a call's result; null: every element counts. */
    readonly answered: readonly (readonly string[])[] | null;
  } | null;
  /** A message's typed parts: the reply's part types and the tool parts' type prefix; null: none. */
  readonly parts: {
    readonly from: ResolvedSource;
    readonly text: readonly string[];
    readonly toolPrefix: string;
  } | null;
  readonly open: {
    readonly roles: readonly Role[];
    readonly roots: readonly Role[];
    readonly calls: ResolvedSource;
    /** Key paths where a call carries its result (empty: none does). */
    readonly answered: readonly (readonly string[])[];
    readonly empty: boolean;
  };
  readonly json: readonly string[];
  /** The columns kept in `metadata.row`: every column but those a node field holds as it is. */
  readonly keep: readonly string[];
  /** Every column a node read selects, in the table's order. */
  readonly columns: readonly string[];
  /** The collation the id tie-break sorts by (PostgreSQL `"C"` for a text id: byte order, as SQLite's). */
  readonly idCollation: string | null;
}

/**
 * An application's tables as entity-git reads them, resolved against the columns the database
 * has and frozen: every table, column and path a read uses, so the queries (and a grouped check
 * of many sessions) are built from it alone.
 */
export interface ResolvedMapping {
  /** The known schema it was recognised as (`messages`, `flat-dag`), or null for a configured mapping. */
  readonly schema: string | null;
  readonly sessions: ResolvedSessionsMapping;
  readonly nodes: ResolvedNodesMapping;
}

/** Column name → declared type, per table. */
export type TableColumns = ReadonlyMap<string, ReadonlyMap<string, string> | null>;

export interface ResolveOptions {
  engine: SqlEngine;
  /** The known schema's name; its optional columns that are absent read as null instead of failing. */
  schema?: string | null;
}

/**
 * Resolves a checked `mapping` against the tables' columns. A table or column it names that the
 * database lacks, or a time or seq column that is not a number column, is `SCHEMA_MISMATCH`
 * naming the key; for a known schema, optional columns that are absent are left out.
 */
export function resolveMapping(input: MappingInput, tables: TableColumns, options: ResolveOptions): ResolvedMapping {
  const lenient = options.schema !== undefined && options.schema !== null;
  const sessions = resolveSessions(
    input.sessions,
    new ColumnCheck({
      tables,
      table: input.sessions.table,
      prefix: 'mapping.sessions',
      engine: options.engine,
      lenient,
    }),
  );
  const nodes = resolveNodes(
    input.nodes,
    new ColumnCheck({ tables, table: input.nodes.table, prefix: 'mapping.nodes', engine: options.engine, lenient }),
  );
  return deepFreeze({ schema: options.schema ?? null, sessions, nodes });
}

/** The columns of one mapped table, and the checks of the names a mapping gives for it. */
class ColumnCheck {
  readonly cols: ReadonlyMap<string, string>;
  readonly table: string;
  readonly engine: SqlEngine;
  /** A known schema's optional columns may be absent (they are left out). */
  readonly lenient: boolean;
  private readonly prefix: string;

  constructor(o: { tables: TableColumns; table: string; prefix: string; engine: SqlEngine; lenient: boolean }) {
    const { table, prefix } = o;
    const cols = o.tables.get(table);
    if (cols === undefined || cols === null)
      throw mismatch(`table ${JSON.stringify(table)} (${prefix}.table) does not exist`, {
        table,
        key: `${prefix}.table`,
      });
    this.cols = cols;
    this.table = table;
    this.prefix = prefix;
    this.engine = o.engine;
    this.lenient = o.lenient;
  }

  /** A column that must exist (and be a number column, for `number`). */
  need(column: string, key: string, kind: 'any' | 'number' = 'any'): string {
    const type = this.cols.get(column);
    const at = `${this.prefix}.${key}`;
    if (type === undefined)
      throw mismatch(`table ${JSON.stringify(this.table)} has no column ${JSON.stringify(column)} (${at})`, {
        table: this.table,
        column,
        key: at,
      });
    const problem = kind === 'number' ? typeProblem(this.engine, 'number', type, undefined) : null;
    if (problem !== null)
      throw mismatch(
        `column ${JSON.stringify(column)} of table ${JSON.stringify(this.table)} (${at}) is ${JSON.stringify(type)}, expected ${problem}`,
        { table: this.table, column, key: at, expected: problem, found: type },
      );
    return column;
  }

  /** A time column and its format: a number column for seconds and milliseconds, any for text. */
  time(input: TimeInput): { created_at: string; createdFormat: TimeFormat } {
    if (typeof input === 'string') return { created_at: this.need(input, 'created_at', 'number'), createdFormat: 's' };
    const kind = input.format === 'text' ? 'any' : 'number';
    return { created_at: this.need(input.column, 'created_at.column', kind), createdFormat: input.format };
  }

  optional(column: string | null | undefined, key: string): string | null {
    if (column === null || column === undefined) return null;
    if (this.lenient && !this.cols.has(column)) return null;
    return this.need(column, key);
  }

  source(value: ValueSource | null | undefined, key: string): ResolvedSource {
    if (value === null || value === undefined) return [];
    const list = Array.isArray(value) ? value : [value];
    const out: ResolvedSpec[] = [];
    list.forEach((spec, i) => {
      const s = splitSpec(spec);
      if (this.lenient && !this.cols.has(s.column)) return;
      this.need(s.column, Array.isArray(value) ? `${key}[${i}]` : key);
      out.push(s);
    });
    return out;
  }

  /** A source that must find at least one of its columns. */
  someOf(value: ValueSource, key: string): ResolvedSource {
    const out = this.source(value, key);
    if (out.length === 0)
      throw mismatch(`table ${JSON.stringify(this.table)} has none of the columns of ${this.prefix}.${key}`, {
        table: this.table,
        key: `${this.prefix}.${key}`,
      });
    return out;
  }

  /** The JSON columns: those listed (present) and every column read by a path, in the table's order. */
  json(listed: readonly string[] | undefined, sources: readonly ResolvedSource[]): string[] {
    const out = new Set<string>();
    for (const c of listed ?? []) if (!this.lenient || this.cols.has(c)) out.add(this.need(c, 'json'));
    for (const src of sources) for (const s of src) if (s.path.length > 0) out.add(s.column);
    return [...this.cols.keys()].filter((c) => out.has(c));
  }
}

function resolveSessions(S: MappingInput['sessions'], t: ColumnCheck): ResolvedSessionsMapping {
  const fields = {
    id: t.need(S.id, 'id'),
    ...t.time(S.created_at),
    head: t.source(S.head, 'head'),
    title: t.source(S.title, 'title'),
    agent_id: t.source(S.agent_id, 'agent_id'),
    model: t.source(S.model, 'model'),
    project_id: t.source(S.project_id, 'project_id'),
    metadata: t.source(S.metadata, 'metadata'),
  };
  const sources = [fields.title, fields.agent_id, fields.model, fields.project_id, fields.metadata, fields.head];
  const json = t.json(S.json, sources);
  const used = new Set<string>([
    fields.id,
    fields.created_at,
    ...json,
    ...sources.flatMap((src) => src.map((s) => s.column)),
  ]);
  return { table: S.table, ...fields, json, columns: [...t.cols.keys()].filter((c) => used.has(c)) };
}

function resolveNodes(N: MappingInput['nodes'], t: ColumnCheck): ResolvedNodesMapping {
  const seqIn = N.seq;
  const seq: ResolvedSeq =
    typeof seqIn === 'string'
      ? { kind: 'column', column: t.need(seqIn, 'seq', 'number'), shift: 0 }
      : 'rank' in seqIn
        ? { kind: 'rank', column: t.need(seqIn.rank, 'seq.rank') }
        : { kind: 'column', column: t.need(seqIn.column, 'seq.column', 'number'), shift: seqIn.from === 0 ? 1 : 0 };
  const roleIn = N.role;
  const role =
    typeof roleIn === 'object' && !Array.isArray(roleIn) && 'from' in roleIn
      ? { from: t.someOf(roleIn.from, 'role.from'), values: { ...(roleIn.values ?? {}) } }
      : { from: t.someOf(roleIn as ValueSource, 'role'), values: {} };
  const inlineIn = N.inline_tools ?? null;
  const inlineFrom = inlineIn === null ? [] : t.source(inlineIn.from, 'inline_tools.from');
  const fields = {
    id: t.need(N.id, 'id'),
    session_id: t.need(N.session_id, 'session_id'),
    ...t.time(N.created_at),
    predecessor:
      N.predecessor === null || typeof N.predecessor !== 'string' ? null : t.need(N.predecessor, 'predecessor'),
    linear: typeof N.predecessor === 'object' && N.predecessor !== null,
    caller: t.optional(N.caller, 'caller'),
    seq,
    role,
    content: t.someOf(N.content, 'content'),
    tool: t.source(N.tool, 'tool'),
    tokens: t.source(N.tokens ?? [], 'tokens'),
    inlineTools:
      inlineIn === null || inlineFrom.length === 0
        ? null
        : {
            from: inlineFrom,
            name: inlineIn.name.map((p) => p.split('.')),
            answered: inlineIn.answered?.map((p) => p.split('.')) ?? null,
          },
    parts:
      N.parts === undefined || N.parts === null
        ? null
        : {
            from: t.someOf(N.parts.from, 'parts.from'),
            text: [...(N.parts.text ?? ['text'])],
            toolPrefix: N.parts.tool_prefix ?? 'tool-',
          },
    open: {
      roles: [...(N.open?.roles ?? [])],
      roots: [...(N.open?.roots ?? [])],
      calls: t.source(N.open?.calls, 'open.calls'),
      answered: (N.open?.answered ?? []).map((p) => p.split('.')),
      empty: N.open?.empty === true,
    },
  };
  // A parts array is JSON wherever it is read, its column as a whole too.
  const partsColumns = (fields.parts?.from ?? []).map((p) => p.column);
  const json = t.json(
    [...(N.json ?? []), ...partsColumns],
    [
      fields.role.from,
      fields.content,
      fields.tool,
      fields.tokens,
      fields.inlineTools?.from ?? [],
      fields.open.calls,
      fields.parts?.from ?? [],
    ],
  );
  // A node field that holds a column as it is keeps it out of `row`; the seq column too (the node's seq says it).
  const structural = new Set<string>([fields.id, fields.session_id, fields.created_at]);
  for (const c of [fields.predecessor, fields.caller, seq.kind === 'column' ? seq.column : null])
    if (c !== null) structural.add(c);
  const idType = t.cols.get(fields.id)!.toLowerCase();
  return {
    table: N.table,
    ...fields,
    json,
    keep: [...t.cols.keys()].filter((c) => !structural.has(c)),
    columns: [...t.cols.keys()],
    idCollation: t.engine === 'postgres' && /text|char/.test(idType) ? 'C' : null,
  };
}

/** `"a.b.c"` is column `a`, path `b.c`; the object form names a column with a dot in it. */
export function splitSpec(spec: ValueSpec): ResolvedSpec {
  if (typeof spec !== 'string') return { column: spec.column, path: [...(spec.path ?? [])] };
  const dot = spec.indexOf('.');
  return dot < 0 ? { column: spec, path: [] } : { column: spec.slice(0, dot), path: spec.slice(dot + 1).split('.') };
}

function mismatch(message: string, data: Record<string, unknown>): EntityGitError<'SCHEMA_MISMATCH'> {
  return new EntityGitError('SCHEMA_MISMATCH', `[sqlite] ${message}; nothing was changed`, data);
}
