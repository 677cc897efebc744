import * as v from 'valibot';
import { checked, deepFreeze, nameSchema, strict } from './config-check.js';

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

const NAME = nameSchema();
const NAME_OR_NULL = v.nullable(nameSchema('a non-empty name or null'));
const names = <const K extends string, const N extends string>(keys: readonly K[], nullable: readonly N[]) =>
  strict(
    Object.fromEntries(keys.map((k) => [k, v.exactOptional(nullable.includes(k as never) ? NAME_OR_NULL : NAME)])) as {
      [P in K]: v.ExactOptionalSchema<P extends N ? typeof NAME_OR_NULL : typeof NAME, undefined>;
    },
    { unknown: 'unknown column' },
  );

/** The `names` key: for each table, the names that differ from the contract's (`null`: no such column). */
export const SchemaNamesSchema = strict(
  {
    projects: v.optional(
      names(['table', 'id', 'name', 'workdir', 'status', 'description', 'created_at'], ['description']),
    ),
    sessions: v.optional(
      names(
        ['table', 'id', 'title', 'agent_id', 'model', 'project_id', 'head', 'created_at', 'metadata'],
        ['title', 'agent_id', 'model', 'project_id', 'head', 'metadata'],
      ),
    ),
    nodes: v.optional(
      names(
        ['table', 'id', 'session_id', 'seq', 'role', 'content', 'predecessor', 'caller', 'created_at', 'metadata'],
        ['caller', 'metadata'],
      ),
    ),
  },
  { unknown: 'unknown table (expected projects, sessions or nodes)' },
);

/** A partial {@link SchemaNames}: what is left out keeps its default name. */
export type SchemaNamesInput = v.InferOutput<typeof SchemaNamesSchema>;

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
  const given = checked(SchemaNamesSchema, input, 'names');
  return deepFreeze({
    projects: { ...DEFAULT_SCHEMA_NAMES.projects, ...given.projects },
    sessions: { ...DEFAULT_SCHEMA_NAMES.sessions, ...given.sessions },
    nodes: { ...DEFAULT_SCHEMA_NAMES.nodes, ...given.nodes },
  });
}
