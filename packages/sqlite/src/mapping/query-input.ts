import * as v from 'valibot';
import { isRecord, nameSchema, shaped, show, strict } from '../config-check.js';

/** The node fields a nodes query must give, and those read when it gives them. */
export const NODE_QUERY_FIELDS = {
  required: ['id', 'session_id', 'seq', 'role', 'content', 'predecessor', 'caller', 'created_at'],
  optional: ['tool', 'tokens', 'inline_tools', 'open', 'metadata'],
} as const;

/** The session fields a sessions query must give, and those read when it gives them. */
export const SESSION_QUERY_FIELDS = {
  required: ['id', 'created_at'],
  optional: ['title', 'agent_id', 'model', 'project_id', 'head', 'metadata'],
} as const;

/** The parameters a nodes query may use; a sessions query takes none. */
export const QUERY_PARAMETERS = ['session_id', 'after_seq'] as const;

/** `:name` where `name` is a parameter, not after another `:` (a PostgreSQL `::cast`) or a word character. */
export const PARAMETER = /(?<![:\w]):(session_id|after_seq)\b/g;

/** A read-only `SELECT` (or `WITH … SELECT`), one statement; `takesParameters`: the nodes query's. */
function select(takesParameters: boolean) {
  const message = (issue: v.BaseIssue<unknown>) => ` must be a SELECT (or WITH … SELECT), got ${show(issue.input)}`;
  return v.pipe(
    v.string(message),
    // Case by hand, not by a flag: the JSON Schema's pattern is the same expression.
    v.regex(/^\s*([Ss][Ee][Ll][Ee][Cc][Tt]|[Ww][Ii][Tt][Hh])\b/, message),
    // One statement: a `;` that ends the text is allowed, another statement after it is not.
    v.check((text) => !/;\s*\S/.test(stripLiterals(text)), ' must be one statement (a ; ends it)'),
    v.check(
      (text) => takesParameters || !new RegExp(PARAMETER.source).test(text),
      " takes no parameter (:session_id and :after_seq are the nodes query's)",
    ),
  );
}

/**
 * A read-only `SELECT`: one text for every engine, or one per engine (`{ "sqlite": "…",
 * "postgres": "…" }`, at least one).
 */
function dialectQuery(takesParameters: boolean, name: string) {
  const text = select(takesParameters);
  const perEngine = v.pipe(
    strict(
      { sqlite: v.optional(text), postgres: v.optional(text) },
      { unknown: 'unknown engine (expected sqlite, postgres)' },
    ),
    v.check((q) => Object.keys(q).length > 0, ' must be a SELECT, or { "sqlite": SELECT, "postgres": SELECT }'),
  );
  return shaped(
    name,
    [text, perEngine],
    (q) => (typeof q === 'string' ? text : isRecord(q) ? perEngine : undefined),
    'a SELECT, or { "sqlite": SELECT, "postgres": SELECT }',
  );
}

function queryForm(takesParameters: boolean, json: string) {
  return strict(
    {
      query: dialectQuery(takesParameters, takesParameters ? 'NodesQuery' : 'SessionsQuery'),
      json: v.optional(
        v.pipe(v.array(nameSchema('a result column'), ' must be an array of result columns'), v.description(json)),
      ),
    },
    { unknown: 'unknown key with "query" (the query\'s result columns are the fields)' },
  );
}

/**
 * The query form of the `sessions` mapping: a `SELECT` whose result columns are the session's
 * fields — `id` and `created_at` (seconds since the epoch) required; `title`, `agent_id`,
 * `model`, `project_id`, `head` and `metadata` read when the query gives them. See
 * docs/app-databases.md, "The query form".
 */
export const SessionsQuerySchema = queryForm(
  false,
  'Result columns holding JSON text, parsed where they are read (`metadata`, usually).',
);

/**
 * The query form of the `nodes` mapping: a `SELECT` taking the parameters `:session_id` and
 * `:after_seq`, whose result columns are the node's fields — `id`, `session_id`, `seq` (1-based,
 * ascending), `role` (a contract role), `content`, `predecessor`, `caller`, `created_at`
 * (seconds) — and, when given, `tool`, `tokens` (a number), `inline_tools` (a JSON array of tool
 * names), `open` (true while the node waits for what completes it) and `metadata` (kept as
 * `metadata.row`). Rows with a seq at or below `:after_seq` may be returned: they are skipped.
 */
export const NodesQuerySchema = queryForm(
  true,
  'Result columns holding JSON text, parsed where they are read (`content`, `metadata`).',
);

/** The columns a markers query must give, and the one read as a time when it gives it. */
export const MARKER_QUERY_FIELDS = { required: ['id'], optional: ['newest'] } as const;

/**
 * The optional `markers` of the query form: a `SELECT` (no parameters) giving one row per
 * session — its `id`, and columns that change whenever that session's rows change (counts, the
 * newest id, update times, a checksum of the rows). Each row is hashed into the session's
 * change marker, one statement for every session, instead of running the nodes query once a
 * session. `newest`, when given, is the time (seconds) of the session's newest node row, for the
 * quiet time. Without it (or without a query for the engine) the markers come from the queries.
 */
export const MarkersQuerySchema = strict(
  { query: dialectQuery(false, 'MarkersQuery') },
  { unknown: 'unknown key with "query" (the markers query\'s result columns are hashed)' },
);

export type SessionsQueryInput = v.InferOutput<typeof SessionsQuerySchema>;
export type NodesQueryInput = v.InferOutput<typeof NodesQuerySchema>;
export type MarkersQueryInput = v.InferOutput<typeof MarkersQuerySchema>;
export type DialectQuery = SessionsQueryInput['query'];

/** The text without its string literals and quoted identifiers, for the checks above. */
function stripLiterals(text: string): string {
  return text.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"/g, "''");
}
