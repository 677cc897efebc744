import { EntityGitError } from '@entity-git/core';
import type { SqlEngine } from '../engine.js';

/**
 * A read-only `SELECT` (or `WITH … SELECT`): one text for every engine, or one per engine
 * (`{ "sqlite": "…", "postgres": "…" }`).
 */
export type DialectQuery = string | Partial<Record<SqlEngine, string>>;

/**
 * The query form of the `sessions` mapping: a `SELECT` whose result columns are the session's
 * fields — `id` and `created_at` (seconds since the epoch) required; `title`, `agent_id`,
 * `model`, `project_id`, `head` and `metadata` read when the query gives them. See
 * docs/app-databases.md, "The query form".
 */
export interface SessionsQueryInput {
  query: DialectQuery;
  /** Result columns holding JSON text, parsed where they are read (`metadata`, usually). */
  json?: string[];
}

/**
 * The query form of the `nodes` mapping: a `SELECT` taking the parameters `:session_id` and
 * `:after_seq`, whose result columns are the node's fields — `id`, `session_id`, `seq` (1-based,
 * ascending), `role` (a contract role), `content`, `predecessor`, `caller`, `created_at`
 * (seconds) — and, when given, `tool`, `tokens` (a number), `inline_tools` (a JSON array of tool
 * names), `open` (true while the node waits for what completes it) and `metadata` (kept as
 * `metadata.row`). Rows with a seq at or below `:after_seq` may be returned: they are skipped.
 */
export interface NodesQueryInput {
  query: DialectQuery;
  /** Result columns holding JSON text, parsed where they are read (`content`, `metadata`). */
  json?: string[];
}

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

/** Checks the shape of a query form (`mapping.sessions` or `mapping.nodes`); `INVALID_OPTION` naming the key. */
export function parseQueryForm(value: Record<string, unknown>, where: string, takesParameters: boolean): void {
  for (const k of Object.keys(value))
    if (k !== 'query' && k !== 'json')
      throw invalid(`${where}.${k}: unknown key with "query" (the query's result columns are the fields)`, where);
  const q = value.query;
  const texts: [string, unknown][] =
    typeof q === 'string'
      ? [[`${where}.query`, q]]
      : typeof q === 'object' && q !== null && !Array.isArray(q)
        ? Object.entries(q).map(([engine, text]) => {
            if (engine !== 'sqlite' && engine !== 'postgres')
              throw invalid(`${where}.query.${engine}: unknown engine (expected sqlite, postgres)`, `${where}.query`);
            return [`${where}.query.${engine}`, text];
          })
        : [];
  if (texts.length === 0)
    throw invalid(`${where}.query must be a SELECT, or { "sqlite": SELECT, "postgres": SELECT }`, `${where}.query`);
  for (const [key, text] of texts) checkSelect(text, key, takesParameters);
  if (value.json !== undefined) {
    if (!Array.isArray(value.json) || value.json.some((c) => typeof c !== 'string' || c === ''))
      throw invalid(`${where}.json must be an array of result columns`, `${where}.json`);
  }
}

function checkSelect(text: unknown, key: string, takesParameters: boolean): void {
  if (typeof text !== 'string' || !/^\s*(select|with)\b/i.test(text))
    throw invalid(`${key} must be a SELECT (or WITH … SELECT), got ${JSON.stringify(text) ?? 'nothing'}`, key);
  // One statement: a `;` that ends the text is allowed, another statement after it is not.
  if (/;\s*\S/.test(stripLiterals(text))) throw invalid(`${key} must be one statement (a ; ends it)`, key);
  if (!takesParameters && new RegExp(PARAMETER.source).test(text))
    throw invalid(`${key} takes no parameter (:session_id and :after_seq are the nodes query's)`, key);
}

/** The text without its string literals and quoted identifiers, for the checks above. */
function stripLiterals(text: string): string {
  return text.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"/g, "''");
}

function invalid(message: string, key: string): EntityGitError<'INVALID_OPTION'> {
  return new EntityGitError('INVALID_OPTION', `[sqlite] ${message}`, { key });
}
