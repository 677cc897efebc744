import { EntityGitError } from '@entity-git/core';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { deepFreeze } from '../config-check.js';
import type { SqlEngine } from '../engine.js';
import type { QueryMappingInput } from './mapping-input.js';
import {
  MARKER_QUERY_FIELDS,
  NODE_QUERY_FIELDS,
  PARAMETER,
  SESSION_QUERY_FIELDS,
  type DialectQuery,
} from './query-input.js';

/** One side of a query mapping, resolved for the engine and checked against the database. */
export interface ResolvedQuery {
  /** The `SELECT`, as the user wrote it for this engine. */
  readonly text: string;
  /** The fields its result gives (the required ones and the optional ones present), in a fixed order. */
  readonly fields: readonly string[];
  /** Result columns parsed as JSON text. */
  readonly json: readonly string[];
}

/** The query form of a mapping, resolved (docs/app-databases.md, "The query form"). */
export interface ResolvedQueryMapping {
  readonly form: 'query';
  /** The known schema it was recognised as, or null for a configured mapping. */
  readonly schema: string | null;
  readonly sessions: ResolvedQuery;
  readonly nodes: ResolvedQuery;
  /** The markers query for this engine (`fields`: `id`, and `newest` when given), or null: none. */
  readonly markers: ResolvedQuery | null;
}

/** The alias of the user's query inside the statements built around it. */
export const QUERY_ALIAS = 'entity_git_q';

/**
 * The query with its parameters bound: `:session_id` and `:after_seq` become bound values, or
 * SQL given for them (a column of an outer query, for the grouped change markers).
 */
export function bindQuery(
  text: string,
  values: { session_id: string | RawBuilder<unknown>; after_seq: number | RawBuilder<unknown> },
): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [];
  let last = 0;
  for (const m of text.matchAll(new RegExp(PARAMETER.source, 'g'))) {
    parts.push(sql.raw(text.slice(last, m.index)));
    const v = values[m[1] as 'session_id' | 'after_seq'];
    parts.push(typeof v === 'object' ? v : sql`${v}`);
    last = m.index + m[0].length;
  }
  // A `;` ending the user's text would end the statement built around it.
  parts.push(sql.raw(text.slice(last).replace(/;\s*$/, '')));
  return sql.join(parts, sql``);
}

/**
 * Resolves a query mapping for the engine and checks it against the database before any
 * session is read: each query runs with a condition no row meets (nothing is read), then each
 * field is selected from its result. A query that does not run, or lacks a required field, is
 * `INVALID_OPTION` naming the mapping key and the column.
 */
export async function resolveQueryMapping(
  db: Kysely<any>,
  engine: SqlEngine,
  input: QueryMappingInput,
  schema: string | null = null,
): Promise<ResolvedQueryMapping> {
  const sessions = await resolveSide(db, engine, {
    key: 'mapping.sessions',
    query: input.sessions.query,
    json: input.sessions.json,
    fields: SESSION_QUERY_FIELDS,
  });
  const nodes = await resolveSide(db, engine, {
    key: 'mapping.nodes',
    query: input.nodes.query,
    json: input.nodes.json,
    fields: NODE_QUERY_FIELDS,
  });
  // A markers query is optional for each engine: without one, the markers come from the queries.
  const markersText = input.markers === undefined ? undefined : input.markers.query;
  const markers =
    markersText === undefined || (typeof markersText !== 'string' && markersText[engine] === undefined)
      ? null
      : await resolveSide(db, engine, {
          key: 'mapping.markers',
          query: markersText,
          json: undefined,
          fields: MARKER_QUERY_FIELDS,
        });
  return deepFreeze({ form: 'query' as const, schema, sessions, nodes, markers });
}

interface Side {
  key: string;
  query: DialectQuery;
  json: readonly string[] | undefined;
  fields: { readonly required: readonly string[]; readonly optional: readonly string[] };
}

async function resolveSide(db: Kysely<any>, engine: SqlEngine, side: Side): Promise<ResolvedQuery> {
  const key = typeof side.query === 'string' ? `${side.key}.query` : `${side.key}.query.${engine}`;
  const text = typeof side.query === 'string' ? side.query : side.query[engine];
  if (text === undefined)
    throw new EntityGitError('INVALID_OPTION', `[sqlite] ${key} is missing: the mapping has no query for ${engine}`, {
      key,
    });
  const bound = bindQuery(text, { session_id: '', after_seq: 0 });
  const none = (select: RawBuilder<unknown>) =>
    sql`select ${select} from (${bound}) as ${sql.id(QUERY_ALIAS)} where 1 = 0`.execute(db);
  try {
    await none(sql`*`);
  } catch (err) {
    throw new EntityGitError(
      'INVALID_OPTION',
      `[sqlite] ${key} does not run: ${(err as Error).message}`,
      { key },
      { cause: err },
    );
  }
  const fields: string[] = [];
  for (const field of [...side.fields.required, ...side.fields.optional]) {
    const present = await none(sql.ref(`${QUERY_ALIAS}.${field}`)).then(
      () => true,
      () => false,
    );
    if (present) fields.push(field);
    else if (side.fields.required.includes(field))
      throw new EntityGitError(
        'INVALID_OPTION',
        `[sqlite] ${key} gives no column ${JSON.stringify(field)} (its result columns are the fields: ${side.fields.required.join(', ')}; optional ${side.fields.optional.join(', ')})`,
        { key, column: field },
      );
  }
  return { text, fields, json: [...(side.json ?? [])] };
}
