import { deepFreeze } from '../schema-names.js';
import { EntityGitError, ROLES, type Role } from '@entity-git/core';
import { parseQueryForm, type NodesQueryInput, type SessionsQueryInput } from './query-input.js';
import { TIME_FORMATS, type TimeFormat } from './time-values.js';

/**
 * Where a value of a row is read: a column (`"content"`), or a key path into a column that holds
 * JSON, written `"column.key.key"` (split at the first dot: the column, then the keys) or as an
 * object `{ "column": "a.b", "path": ["k"] }` when a column's name holds a dot.
 */
export type ValueSpec = string | { column: string; path?: string[] };

/**
 * A time column: its name (seconds since the epoch, a number column), or `{ "column", "format" }`
 * with `format` `s`, `ms` (milliseconds) or `text` (ISO 8601, or SQL's `YYYY-MM-DD HH:MM:SS`, UTC).
 * A SQL timestamp column is read as what it is under any format.
 */
export type TimeInput = string | { column: string; format: TimeFormat };

/** One {@link ValueSpec}, or several tried in order: the first that gives a non-null value wins. */
export type ValueSource = ValueSpec | ValueSpec[];

/** How an application's sessions table maps to a session. */
export interface SessionsMappingInput {
  /** The table (may be schema-qualified, `chat.sessions`). */
  table: string;
  /** The id column. */
  id: string;
  /** The creation time column: seconds since the epoch (a number column), or another {@link TimeInput}. */
  created_at: TimeInput;
  title?: ValueSource | null;
  agent_id?: ValueSource | null;
  model?: ValueSource | null;
  /** The project id, often a key of a JSON column (`"extra_meta.project_id"`). */
  project_id?: ValueSource | null;
  /**
   * Where the node the conversation continues from is named: a column, or a key path into a
   * JSON column (`"chat.history.currentId"`).
   */
  head?: ValueSource | null;
  /** The session's metadata: usually a JSON column as a whole (`"extra_meta"`). */
  metadata?: ValueSource | null;
  /** Columns holding JSON text, parsed where they are read (a column read by a path is parsed anyway). */
  json?: string[];
}

/**
 * A node's `seq`: a 1-based column (`"seq"`), a column counted from another base
 * (`{ "column": "seq", "from": 0 }`), or none in the table: the 1-based rank of the row in its
 * session by a time column, ties broken by id (`{ "rank": "timestamp" }`).
 */
export type SeqInput = string | { column: string; from: 0 | 1 } | { rank: string };

/** A node's role: where it is read, and the application's values that are not the contract's. */
export type RoleInput = ValueSource | { from: ValueSource; values?: Record<string, Role> };

/** When a node the application writes in several steps is not complete yet (see the docs). */
export interface OpenInput {
  /** A node of one of these roles is open while no other node continues from it (default none). */
  roles?: Role[];
  /**
   * Likewise a node of one of these roles that continues from none (a system message opening a
   * conversation, written before its first prompt). Default none.
   */
  roots?: Role[];
  /**
   * An assistant node whose value here is an array with a call not answered in the row (see
   * `answered`) is open likewise: its results are nodes of their own, still to come.
   */
  calls?: ValueSource;
  /**
   * Key paths (dotted) where a call of `calls` carries its result: a call holding a non-null
   * value at one of them was answered inside the row and holds nothing open. Default none: every
   * call waits for a node of its own.
   */
  answered?: string[];
  /** An assistant node with no content (null or `""`) and no inline tools is open likewise (default false). */
  empty?: boolean;
}

/** How an application's messages table maps to nodes. */
export interface NodesMappingInput {
  table: string;
  id: string;
  session_id: string;
  seq: SeqInput;
  role: RoleInput;
  /** The node's content: a column (plain text or JSON) or a path into a JSON column. */
  content: ValueSource;
  /**
   * The column naming the node this one continues from; `{ "linear": true }`: no such column,
   * each node continues the one before it in the session's order (the seq); null: every node is
   * a root.
   */
  predecessor: string | null | { linear: true };
  /** The column naming the assistant node a tool result answers (default null: none). */
  caller?: string | null;
  /** The creation time column: seconds since the epoch (a number column), or another {@link TimeInput}. */
  created_at: TimeInput;
  /** A tool node's tool name (it becomes `metadata.tool`). */
  tool?: ValueSource | null;
  /** Token counts, summed (they become `metadata.tokens`); each spec read as a number. */
  tokens?: ValueSpec[];
  /**
   * Tool calls a reply holds with their results, in its own row (they become
   * `metadata.inline_tools`, the names): `from` is an array, `name` the key paths where each
   * element's name may be (dotted, tried in order); an element that is a string is the name.
   * `answered` (optional): key paths where an element carries its result; when given, only the
   * elements holding a non-null value at one of them count (the others are answered by nodes of
   * their own, which count themselves).
   */
  inline_tools?: { from: ValueSource; name: string[]; answered?: string[] } | null;
  /**
   * A message kept as an array of typed parts (`[{ type: "step-start" }, { type: "reasoning",
   * text }, { type: "tool-getWeather", … }, { type: "text", text }]`): `from` is the array; the
   * reply is the text of the parts whose type is in `text` (default `["text"]`, joined; the
   * `content` value when there is none), the tools the parts whose type starts with `tool_prefix`
   * (default `"tool-"`, the rest of the type the name). Other parts are in neither.
   */
  parts?: { from: ValueSource; text?: string[]; tool_prefix?: string } | null;
  open?: OpenInput;
  /** Columns holding JSON text (see {@link SessionsMappingInput.json}). */
  json?: string[];
}

/** The table form of the `mapping` key: an application's own tables, read as they are. */
export interface TableMappingInput {
  sessions: SessionsMappingInput;
  nodes: NodesMappingInput;
}

/** The query form of the `mapping` key: the sessions and the nodes as read-only `SELECT`s. */
export interface QueryMappingInput {
  sessions: SessionsQueryInput;
  nodes: NodesQueryInput;
}

/** The `mapping` key of the configuration: the table form, or the query form (docs/app-databases.md). */
export type MappingInput = TableMappingInput | QueryMappingInput;

/** Whether a checked mapping is the query form. */
export function isQueryMapping(m: MappingInput): m is QueryMappingInput {
  return 'query' in m.sessions;
}

const SESSION_KEYS = [
  'table',
  'id',
  'created_at',
  'title',
  'agent_id',
  'model',
  'project_id',
  'head',
  'metadata',
  'json',
];
const NODE_KEYS = [
  'table',
  'id',
  'session_id',
  'seq',
  'role',
  'content',
  'predecessor',
  'caller',
  'created_at',
  'tool',
  'tokens',
  'inline_tools',
  'parts',
  'open',
  'json',
];

/**
 * Checks the shape of a `mapping` (at load, before any database is opened): every key known,
 * every name a non-empty string, every role a contract role. `INVALID_OPTION` naming the key
 * (`mapping.nodes.seq`). Whether the columns exist is checked when the database is opened
 * (`SCHEMA_MISMATCH`). Returns the value, frozen.
 */
export function parseMapping(value: unknown, where = 'mapping'): MappingInput {
  const m = object(value, where);
  keys(m, ['sessions', 'nodes'], where, ['sessions', 'nodes']);
  const s = object(m.sessions, `${where}.sessions`);
  const n = object(m.nodes, `${where}.nodes`);
  if ('query' in s || 'query' in n) {
    if (!('query' in s) || !('query' in n))
      throw invalid(`${where}: give both sessions.query and nodes.query, or neither (the table form)`);
    parseQueryForm(s, `${where}.sessions`, false);
    parseQueryForm(n, `${where}.nodes`, true);
    return deepFreeze(JSON.parse(JSON.stringify(m))) as MappingInput;
  }
  keys(s, SESSION_KEYS, `${where}.sessions`, ['table', 'id', 'created_at']);
  keys(n, NODE_KEYS, `${where}.nodes`, [
    'table',
    'id',
    'session_id',
    'seq',
    'role',
    'content',
    'predecessor',
    'created_at',
  ]);
  const S = `${where}.sessions`;
  const N = `${where}.nodes`;
  for (const k of ['table', 'id']) name(s[k], `${S}.${k}`);
  time(s.created_at, `${S}.created_at`);
  for (const k of ['title', 'agent_id', 'model', 'project_id', 'metadata']) optionalSource(s[k], `${S}.${k}`);
  optionalSource(s.head, `${S}.head`);
  nameList(s.json, `${S}.json`);
  for (const k of ['table', 'id', 'session_id']) name(n[k], `${N}.${k}`);
  time(n.created_at, `${N}.created_at`);
  if (typeof n.predecessor === 'object' && n.predecessor !== null) {
    keys(n.predecessor as Record<string, unknown>, ['linear'], `${N}.predecessor`, ['linear']);
    if ((n.predecessor as Record<string, unknown>).linear !== true)
      throw invalid(`${N}.predecessor.linear must be true (or give a column, or null)`);
  } else if (n.predecessor !== null) name(n.predecessor, `${N}.predecessor`);
  optionalName(n.caller, `${N}.caller`);
  seq(n.seq, `${N}.seq`);
  role(n.role, `${N}.role`);
  source(n.content, `${N}.content`);
  optionalSource(n.tool, `${N}.tool`);
  if (n.tokens !== undefined) {
    if (!Array.isArray(n.tokens)) throw invalid(`${N}.tokens must be an array of columns or paths`);
    n.tokens.forEach((t, i) => spec(t, `${N}.tokens[${i}]`));
  }
  if (n.inline_tools !== undefined && n.inline_tools !== null) {
    const t = object(n.inline_tools, `${N}.inline_tools`);
    keys(t, ['from', 'name', 'answered'], `${N}.inline_tools`);
    source(t.from, `${N}.inline_tools.from`);
    if (!Array.isArray(t.name) || t.name.length === 0)
      throw invalid(`${N}.inline_tools.name must be a non-empty array of key paths`);
    t.name.forEach((p, i) => name(p, `${N}.inline_tools.name[${i}]`));
    keyPaths(t.answered, `${N}.inline_tools.answered`);
  }
  if (n.parts !== undefined && n.parts !== null) {
    const p = object(n.parts, `${N}.parts`);
    keys(p, ['from', 'text', 'tool_prefix'], `${N}.parts`, ['from']);
    source(p.from, `${N}.parts.from`);
    if (p.text !== undefined) nameList(p.text, `${N}.parts.text`);
    if (p.tool_prefix !== undefined) name(p.tool_prefix, `${N}.parts.tool_prefix`);
  }
  if (n.open !== undefined) {
    const o = object(n.open, `${N}.open`);
    keys(o, ['roles', 'roots', 'calls', 'answered', 'empty'], `${N}.open`);
    keyPaths(o.answered, `${N}.open.answered`);
    for (const key of ['roles', 'roots']) {
      const list = o[key];
      if (list === undefined) continue;
      if (!Array.isArray(list)) throw invalid(`${N}.open.${key} must be an array of roles`);
      list.forEach((r, i) => contractRole(r, `${N}.open.${key}[${i}]`));
    }
    optionalSource(o.calls, `${N}.open.calls`);
    if (o.empty !== undefined && typeof o.empty !== 'boolean') throw invalid(`${N}.open.empty must be true or false`);
  }
  nameList(n.json, `${N}.json`);
  return deepFreeze(JSON.parse(JSON.stringify(m))) as MappingInput;
}

function seq(v: unknown, where: string): void {
  if (typeof v === 'string') {
    name(v, where);
    return;
  }
  const o = object(v, where, 'a column, { "column", "from": 0 or 1 } or { "rank": column }');
  if ('rank' in o) {
    keys(o, ['rank'], where);
    name(o.rank, `${where}.rank`);
    return;
  }
  keys(o, ['column', 'from'], where);
  name(o.column, `${where}.column`);
  if (o.from !== 0 && o.from !== 1) throw invalid(`${where}.from must be 0 or 1 (the seq of a session's first row)`);
}

function time(v: unknown, where: string): void {
  if (typeof v === 'string') {
    name(v, where);
    return;
  }
  const o = object(v, where, 'a column, or { "column", "format": "s" | "ms" | "text" }');
  keys(o, ['column', 'format'], where, ['column', 'format']);
  name(o.column, `${where}.column`);
  if (!TIME_FORMATS.includes(o.format as TimeFormat))
    throw invalid(`${where}.format must be one of ${TIME_FORMATS.join(', ')}, got ${JSON.stringify(o.format)}`);
}

function role(v: unknown, where: string): void {
  if (typeof v === 'object' && v !== null && !Array.isArray(v) && 'from' in v) {
    const o = v as Record<string, unknown>;
    keys(o, ['from', 'values'], where);
    source(o.from, `${where}.from`);
    if (o.values !== undefined) {
      const values = object(o.values, `${where}.values`);
      for (const [k, r] of Object.entries(values)) contractRole(r, `${where}.values.${k}`);
    }
    return;
  }
  source(v, where);
}

function contractRole(v: unknown, where: string): void {
  if (!ROLES.includes(v as Role))
    throw invalid(`${where} must be one of ${ROLES.join(', ')}, got ${JSON.stringify(v)}`);
}

function source(v: unknown, where: string): void {
  if (Array.isArray(v)) {
    if (v.length === 0) throw invalid(`${where} must not be an empty list`);
    v.forEach((s, i) => spec(s, `${where}[${i}]`));
  } else spec(v, where);
}

function optionalSource(v: unknown, where: string): void {
  if (v !== undefined && v !== null) source(v, where);
}

function spec(v: unknown, where: string): void {
  if (typeof v === 'string') {
    name(v, where);
    if (v.split('.').some((part) => part === ''))
      throw invalid(`${where}: ${JSON.stringify(v)} has an empty key (write "column.key.key")`);
    return;
  }
  const o = object(v, where, 'a column, "column.key.key" or { "column", "path" }');
  keys(o, ['column', 'path'], where);
  name(o.column, `${where}.column`);
  if (o.path !== undefined) {
    if (!Array.isArray(o.path)) throw invalid(`${where}.path must be an array of keys`);
    o.path.forEach((k, i) => name(k, `${where}.path[${i}]`));
  }
}

function name(v: unknown, where: string): void {
  if (typeof v !== 'string' || v === '' || /[\u0000\uD800-\uDFFF]/u.test(v))
    throw invalid(`${where} must be a non-empty name, got ${JSON.stringify(v) ?? 'nothing'}`);
}

function keyPaths(v: unknown, where: string): void {
  if (v === undefined) return;
  if (!Array.isArray(v) || v.length === 0) throw invalid(`${where} must be a non-empty array of key paths`);
  v.forEach((p, i) => {
    name(p, `${where}[${i}]`);
    if ((p as string).split('.').includes('')) throw invalid(`${where}[${i}]: ${JSON.stringify(p)} has an empty key`);
  });
}

function optionalName(v: unknown, where: string): void {
  if (v !== undefined && v !== null) name(v, where);
}

function nameList(v: unknown, where: string): void {
  if (v === undefined) return;
  if (!Array.isArray(v)) throw invalid(`${where} must be an array of columns`);
  v.forEach((c, i) => name(c, `${where}[${i}]`));
}

function object(v: unknown, where: string, expected = 'an object'): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw invalid(`${where} must be ${expected}, got ${JSON.stringify(v) ?? 'nothing'}`);
  return v as Record<string, unknown>;
}

function keys(
  o: Record<string, unknown>,
  allowed: readonly string[],
  where: string,
  required: readonly string[] = [],
): void {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) throw invalid(`${where}.${k}: unknown key (expected ${allowed.join(', ')})`);
  }
  for (const k of required) if (!(k in o)) throw invalid(`${where}.${k} is required`);
}

function invalid(message: string): EntityGitError<'INVALID_OPTION'> {
  return new EntityGitError('INVALID_OPTION', `[sqlite] ${message}`, { key: message.split(/[ :[]/, 1)[0] });
}
