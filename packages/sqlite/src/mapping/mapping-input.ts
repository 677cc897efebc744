import { ROLES } from '@entity-git/core';
import * as v from 'valibot';
import { checked, deepFreeze, isRecord, KeyPath, Name, nameSchema, shaped, show, strict } from '../config-check.js';
import { MarkersQuerySchema, NodesQuerySchema, SessionsQuerySchema } from './query-input.js';
import { TIME_FORMATS } from './time-values.js';

// The `mapping` key's schemas (docs/app-databases.md): each key's doc is its `description`, which
// the config file's JSON Schema carries to editors.

const about = v.description;

/**
 * Where a value of a row is read: a column (`"content"`), or a key path into a column that holds
 * JSON, written `"column.key.key"` (split at the first dot: the column, then the keys) or as an
 * object `{ "column": "a.b", "path": ["k"] }` when a column's name holds a dot.
 */
const Spec = (() => {
  const object = strict({ column: Name, path: v.optional(v.array(Name, ' must be an array of keys')) });
  return shaped(
    'ValueSpec',
    [KeyPath, object],
    (spec) => (typeof spec === 'string' ? KeyPath : isRecord(spec) ? object : undefined),
    'a column, "column.key.key" or { "column", "path" }',
  );
})();

/** One {@link Spec}, or several tried in order: the first that gives a non-null value wins. */
const Source = (() => {
  const list = v.pipe(v.array(Spec), v.minLength(1, ' must not be an empty list'));
  return shaped(
    'ValueSource',
    [Spec, list],
    (source) => (Array.isArray(source) ? list : Spec),
    'a column, a key path, or a list of them',
  );
})();
const OptionalSource = (doc: string) => v.optional(v.pipe(v.nullable(Source), about(doc)));

/**
 * A time column: its name (seconds since the epoch, a number column), or `{ "column", "format" }`
 * with `format` `s`, `ms` (milliseconds) or `text` (ISO 8601, or SQL's `YYYY-MM-DD HH:MM:SS`, UTC).
 * A SQL timestamp column is read as what it is under any format.
 */
const Time = (() => {
  const format = v.picklist(TIME_FORMATS, (i) => ` must be one of ${TIME_FORMATS.join(', ')}, got ${show(i.input)}`);
  const object = strict({ column: Name, format });
  return shaped(
    'Time',
    [Name, object],
    (time) => (typeof time === 'string' ? Name : isRecord(time) ? object : undefined),
    'a column, or { "column", "format": "s" | "ms" | "text" }',
  );
})();

const ContractRole = v.picklist(ROLES, (i) => ` must be one of ${ROLES.join(', ')}, got ${show(i.input)}`);

/**
 * A node's `seq`: a 1-based column (`"seq"`), a column counted from another base
 * (`{ "column": "seq", "from": 0 }`), or none in the table: the 1-based rank of the row in its
 * session by a time column, ties broken by id (`{ "rank": "timestamp" }`).
 */
const Seq = (() => {
  const from = v.picklist([0, 1], " must be 0 or 1 (the seq of a session's first row)");
  const counted = strict({ column: Name, from });
  const rank = strict({ rank: Name });
  return shaped(
    'Seq',
    [Name, counted, rank],
    (seq) => (typeof seq === 'string' ? Name : isRecord(seq) ? ('rank' in seq ? rank : counted) : undefined),
    'a column, { "column", "from": 0 or 1 } or { "rank": column }',
  );
})();

/** A node's role: where it is read, and the application's values that are not the contract's. */
const RoleSchema = (() => {
  const mapped = strict({ from: Source, values: v.optional(v.record(v.string(), ContractRole)) });
  return shaped(
    'Role',
    [Source, mapped],
    (role) => (isRecord(role) && 'from' in role ? mapped : Source),
    'a column, a key path, or { "from", "values" }',
  );
})();

/** The column naming the node this one continues from, `{ "linear": true }`, or null. */
const Predecessor = (() => {
  const linear = strict({ linear: v.literal(true, ' must be true (or give a column, or null)') });
  const none = v.null();
  return shaped(
    'Predecessor',
    [Name, linear, none],
    (p) => (p === null ? none : isRecord(p) ? linear : Name),
    'a column, { "linear": true } or null',
  );
})();

const KeyPaths = (doc: string) =>
  v.optional(
    v.pipe(
      v.array(KeyPath, ' must be a non-empty array of key paths'),
      v.minLength(1, ' must be a non-empty array of key paths'),
      about(doc),
    ),
  );
const Columns = (doc: string) => v.optional(v.pipe(v.array(Name, ' must be an array of columns'), about(doc)));
const Roles = (doc: string) => v.optional(v.pipe(v.array(ContractRole, ' must be an array of roles'), about(doc)));

/** How an application's sessions table maps to a session. */
const SessionsTableSchema = strict({
  table: v.pipe(Name, about('The table (may be schema-qualified, `chat.sessions`).')),
  id: v.pipe(Name, about('The id column.')),
  created_at: v.pipe(
    Time,
    about('The creation time column: seconds since the epoch (a number column), or `{ "column", "format" }`.'),
  ),
  title: OptionalSource('The title.'),
  agent_id: OptionalSource('The agent id.'),
  model: OptionalSource('The model.'),
  project_id: OptionalSource('The project id, often a key of a JSON column (`"extra_meta.project_id"`).'),
  head: OptionalSource(
    'Where the node the conversation continues from is named: a column, or a key path into a JSON column (`"chat.history.currentId"`).',
  ),
  metadata: OptionalSource('The session\'s metadata: usually a JSON column as a whole (`"extra_meta"`).'),
  json: Columns('Columns holding JSON text, parsed where they are read (a column read by a path is parsed anyway).'),
});

/** When a node the application writes in several steps is not complete yet (docs/app-databases.md). */
const Open = strict({
  roles: Roles('A node of one of these roles is open while no other node continues from it (default none).'),
  roots: Roles(
    'Likewise a node of one of these roles that continues from none (a system message opening a conversation, written before its first prompt). Default none.',
  ),
  calls: OptionalSource(
    'An assistant node whose value here is an array with a call not answered in the row (see `answered`) is open likewise: its results are nodes of their own, still to come.',
  ),
  answered: KeyPaths(
    'Key paths (dotted) where a call of `calls` carries its result: a call holding a non-null value at one of them was answered inside the row. Default none.',
  ),
  empty: v.optional(
    v.pipe(
      v.boolean(' must be true or false'),
      about('An assistant node with no content (null or `""`) and no inline tools is open likewise (default false).'),
    ),
  ),
});

/** How an application's messages table maps to nodes. */
const NodesTableSchema = strict({
  table: Name,
  id: Name,
  session_id: Name,
  seq: v.pipe(
    Seq,
    about('A 1-based column, `{ "column", "from": 0 }`, or `{ "rank": time column }` (none in the table).'),
  ),
  role: v.pipe(
    RoleSchema,
    about("Where the role is read, and `values`: the application's values that are not the contract's."),
  ),
  content: v.pipe(Source, about("The node's content: a column (plain text or JSON) or a path into a JSON column.")),
  predecessor: v.pipe(
    Predecessor,
    about(
      'The column naming the node this one continues from; `{ "linear": true }`: each node continues the one before it in the seq order; null: every node is a root.',
    ),
  ),
  caller: v.optional(
    v.pipe(v.nullable(Name), about('The column naming the assistant node a tool result answers (default null: none).')),
  ),
  created_at: v.pipe(
    Time,
    about('The creation time column: seconds since the epoch (a number column), or `{ "column", "format" }`.'),
  ),
  tool: OptionalSource("A tool node's tool name (it becomes `metadata.tool`)."),
  tokens: v.optional(
    v.pipe(
      v.array(Spec, ' must be an array of columns or paths'),
      about('Token counts, summed (they become `metadata.tokens`); each read as a number.'),
    ),
  ),
  inline_tools: v.optional(
    v.pipe(
      v.nullable(
        strict({
          from: Source,
          name: v.pipe(
            v.array(Name, ' must be a non-empty array of key paths'),
            v.minLength(1, ' must be a non-empty array of key paths'),
          ),
          answered: KeyPaths('Key paths where an element carries its result; when given, only those count.'),
        }),
      ),
      about(
        "Tool calls a reply holds with their results, in its own row (they become `metadata.inline_tools`): `from` is an array, `name` the key paths of each element's name.",
      ),
    ),
  ),
  parts: v.optional(
    v.pipe(
      v.nullable(
        strict({
          from: Source,
          text: Columns('Part types whose text is the reply (default `["text"]`).'),
          tool_prefix: v.optional(nameSchema()),
        }),
      ),
      about(
        'A message kept as an array of typed parts: the reply is the text of the parts whose type is in `text`, the tools the parts whose type starts with `tool_prefix` (default `"tool-"`).',
      ),
    ),
  ),
  open: v.optional(Open),
  json: Columns('Columns holding JSON text, parsed where they are read.'),
});

const TableMappingSchema = strict({ sessions: SessionsTableSchema, nodes: NodesTableSchema });
const QueryMappingSchema = strict({
  sessions: SessionsQuerySchema,
  nodes: NodesQuerySchema,
  markers: v.optional(MarkersQuerySchema),
});
const HalfQuery = v.custom<never>(
  () => false,
  ': give both sessions.query and nodes.query, or neither (the table form)',
);

/**
 * The `mapping` key of the configuration: an application's own tables read as they are (the
 * table form), or the sessions and the nodes as read-only `SELECT`s (the query form;
 * docs/app-databases.md).
 */
export const MappingSchema = shaped(
  'Mapping',
  [TableMappingSchema, QueryMappingSchema],
  (m) => {
    if (!isRecord(m)) return undefined;
    const queries = [m.sessions, m.nodes].filter((side) => isRecord(side) && 'query' in side).length;
    return queries === 0 ? TableMappingSchema : queries === 2 ? QueryMappingSchema : HalfQuery;
  },
  'an object ({ "sessions", "nodes" })',
);

export type TableMappingInput = v.InferOutput<typeof TableMappingSchema>;
export type QueryMappingInput = v.InferOutput<typeof QueryMappingSchema>;
export type MappingInput = TableMappingInput | QueryMappingInput;
export type SessionsMappingInput = TableMappingInput['sessions'];
export type NodesMappingInput = TableMappingInput['nodes'];
export type ValueSpec = v.InferOutput<typeof Spec>;
export type ValueSource = v.InferOutput<typeof Source>;
export type TimeInput = v.InferOutput<typeof Time>;
export type SeqInput = v.InferOutput<typeof Seq>;
export type RoleInput = v.InferOutput<typeof RoleSchema>;
export type OpenInput = v.InferOutput<typeof Open>;

/** Whether a checked mapping is the query form. */
export function isQueryMapping(m: MappingInput): m is QueryMappingInput {
  return 'query' in m.sessions;
}

/**
 * Checks the shape of a `mapping` (at load, before any database is opened): every key known,
 * every name a non-empty string, every role a contract role. `INVALID_OPTION` naming the key
 * (`mapping.nodes.seq`). Whether the columns exist is checked when the database is opened
 * (`SCHEMA_MISMATCH`). Returns a copy, frozen.
 */
export function parseMapping(value: unknown, where = 'mapping'): MappingInput {
  return deepFreeze(checked(MappingSchema, value, where));
}
