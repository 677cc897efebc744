import { EntityGitError } from '@entity-git/core';

/** Physical names of the `projects` table and its columns. `null`: the column does not exist. */
export interface ProjectsNames {
  table: string;
  id: string;
  name: string;
  workdir: string;
  status: string;
  description: string | null;
  created_at: string;
}

/** Physical names of the `sessions` table and its columns. `null`: the column does not exist. */
export interface SessionsNames {
  table: string;
  id: string;
  title: string | null;
  agent_id: string | null;
  model: string | null;
  project_id: string | null;
  head: string | null;
  created_at: string;
  metadata: string | null;
}

/** Physical names of the `nodes` table and its columns. `null`: the column does not exist. */
export interface NodesNames {
  table: string;
  id: string;
  session_id: string;
  seq: string;
  role: string;
  content: string;
  predecessor: string;
  caller: string | null;
  created_at: string;
  metadata: string | null;
}

/**
 * Where the three tables of the data model (docs/design.md, 'The data model') live. Keys are the contract's names; values are the
 * names in the database. A table name may be schema-qualified (`chat.messages`).
 */
export interface SchemaNames {
  projects: ProjectsNames;
  sessions: SessionsNames;
  nodes: NodesNames;
}

/** A partial {@link SchemaNames}: what is left out keeps its default name. */
export type SchemaNamesInput = { [T in keyof SchemaNames]?: Partial<SchemaNames[T]> };

const NULLABLE: { [T in keyof SchemaNames]: ReadonlySet<string> } = {
  projects: new Set(['description']),
  sessions: new Set(['title', 'agent_id', 'model', 'project_id', 'head', 'metadata']),
  nodes: new Set(['caller', 'metadata']),
};

/** The contract's own names (the README's 'Schema and migrations'); what the migrations create by default. */
export const DEFAULT_SCHEMA_NAMES: SchemaNames = deepFreeze({
  projects: {
    table: 'projects',
    id: 'id',
    name: 'name',
    workdir: 'workdir',
    status: 'status',
    description: 'description',
    created_at: 'created_at',
  },
  sessions: {
    table: 'sessions',
    id: 'id',
    title: 'title',
    agent_id: 'agent_id',
    model: 'model',
    project_id: 'project_id',
    head: 'head',
    created_at: 'created_at',
    metadata: 'metadata',
  },
  nodes: {
    table: 'nodes',
    id: 'id',
    session_id: 'session_id',
    seq: 'seq',
    role: 'role',
    content: 'content',
    predecessor: 'predecessor',
    caller: 'caller',
    created_at: 'created_at',
    metadata: 'metadata',
  },
});

/**
 * Completes a partial mapping with the defaults and freezes it. Unknown keys are refused, so a
 * typo (`sesions`, `sequence`) fails at start-up instead of reading the wrong column later.
 */
export function resolveSchemaNames(input: SchemaNamesInput = {}): SchemaNames {
  if (typeof input !== 'object' || input === null) throw invalid('names must be an object');
  for (const table of Object.keys(input)) {
    if (!(table in DEFAULT_SCHEMA_NAMES))
      throw invalid(`names.${table}: unknown table (expected projects, sessions or nodes)`);
  }
  const out = {} as Record<keyof SchemaNames, Record<string, string | null>>;
  for (const table of Object.keys(DEFAULT_SCHEMA_NAMES) as (keyof SchemaNames)[]) {
    const given = (input[table] ?? {}) as Record<string, unknown>;
    if (typeof given !== 'object' || given === null) throw invalid(`names.${table} must be an object`);
    const defaults = DEFAULT_SCHEMA_NAMES[table] as unknown as Record<string, string>;
    for (const key of Object.keys(given)) {
      if (!(key in defaults)) throw invalid(`names.${table}.${key}: unknown column`);
    }
    const resolved: Record<string, string | null> = {};
    for (const key of Object.keys(defaults)) {
      const value = key in given ? given[key] : defaults[key];
      if (value === null && NULLABLE[table].has(key)) {
        resolved[key] = null;
      } else if (typeof value === 'string' && value.length > 0 && !/[\u0000\uD800-\uDFFF]/u.test(value)) {
        resolved[key] = value;
      } else {
        throw invalid(`names.${table}.${key} must be a non-empty name${NULLABLE[table].has(key) ? ' or null' : ''}`);
      }
    }
    out[table] = resolved;
  }
  return deepFreeze(out) as unknown as SchemaNames;
}

function invalid(message: string): EntityGitError<'INVALID_OPTION'> {
  return new EntityGitError('INVALID_OPTION', `[sqlite] ${message}`);
}

/** Freezes a value and everything in it (the resolved names and mappings are shared, never changed). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
