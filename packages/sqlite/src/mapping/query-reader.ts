import { createHash } from 'node:crypto';
import {
  EntityGitError,
  ROLES,
  validateNode,
  validateSession,
  type DagNode,
  type JsonValue,
  type Role,
  type Session,
} from '@entity-git/core';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { dbError, type SqlEngine } from '../engine.js';
import { digestSum, type ContentMarker, type MarkerScope } from '../markers/content-markers.js';
import { invalidRow, nullableText, num, text } from '../rows.js';
import type { MappedRead } from './mapped-reader.js';
import { QUERY_ALIAS, bindQuery, type ResolvedQuery, type ResolvedQueryMapping } from './query-mapping.js';
import { RowValues, countOf, textOf } from './row-values.js';
import { secondsOf } from './time-values.js';

type Row = Record<string, unknown>;

const Q = sql.id(QUERY_ALIAS);
const fieldsOf = (q: ResolvedQuery) =>
  sql.join(
    q.fields.map((f) => sql.ref(`${QUERY_ALIAS}.${f}`)),
    sql`, `,
  );

/**
 * Reads a database through the query form of a mapping: every statement selects from the
 * user's `SELECT` as a subquery, with its parameters bound; nothing here writes.
 */
export class QueryReader {
  readonly #db: Kysely<any>;
  readonly #engine: SqlEngine;
  readonly #m: ResolvedQueryMapping;

  constructor(db: Kysely<any>, engine: SqlEngine, mapping: ResolvedQueryMapping) {
    this.#db = db;
    this.#engine = engine;
    this.#m = mapping;
  }

  get mapping(): ResolvedQueryMapping {
    return this.#m;
  }

  /** Session ids in creation order (time, then id). */
  async listSessions(): Promise<string[]> {
    const S = this.#m.sessions;
    try {
      const rows = await sql<Row>`select ${sql.ref(`${QUERY_ALIAS}.id`)} as id from (${bindQuery(S.text, NONE)}) as ${Q}
        order by ${sql.ref(`${QUERY_ALIAS}.created_at`)}, ${sql.ref(`${QUERY_ALIAS}.id`)}`.execute(this.#db);
      return rows.rows.map((r) => text(r.id));
    } catch (err) {
      throw dbError(err, 'listing sessions (mapping.sessions.query)');
    }
  }

  async getSession(sessionId: string): Promise<Session | null> {
    const row = await this.#sessionRow(sessionId);
    return row === undefined ? null : this.#decodeSession(row);
  }

  async getHead(sessionId: string): Promise<string | null> {
    if (!this.#m.sessions.fields.includes('head')) return null;
    const row = await this.#sessionRow(sessionId);
    return nullableText(row?.head ?? null);
  }

  async #sessionRow(sessionId: string): Promise<Row | undefined> {
    const S = this.#m.sessions;
    try {
      return (
        await sql<Row>`select ${fieldsOf(S)} from (${bindQuery(S.text, NONE)}) as ${Q}
          where ${sql.ref(`${QUERY_ALIAS}.id`)} = ${sessionId}`.execute(this.#db)
      ).rows[0];
    } catch (err) {
      throw dbError(err, `reading session ${JSON.stringify(sessionId)} (mapping.sessions.query)`);
    }
  }

  /**
   * The nodes after `read.afterSeq`, in pages: each page and, when it holds an open node, the
   * session's newest row time, read in one snapshot. An open node is pending unless the session
   * is quiet (docs/design.md, 'Turns, commits and branches': Completeness).
   */
  async *nodesAfter(read: MappedRead): AsyncIterable<DagNode> {
    const N = this.#m.nodes;
    let cursor = read.afterSeq;
    for (;;) {
      const page = await this.#db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute(async (trx) => {
          const bound = bindQuery(N.text, { session_id: read.sessionId, after_seq: cursor });
          const seq = sql.ref(`${QUERY_ALIAS}.seq`);
          const rows = (
            await sql<Row>`select ${fieldsOf(N)} from (${bound}) as ${Q} where ${seq} > ${cursor}
              order by ${seq} limit ${read.batchSize}`.execute(trx)
          ).rows;
          const nodes = rows.map((r) => this.#decodeNode(r));
          const open = nodes.filter((n) => n.open);
          if (open.length > 0) {
            const newest = await this.#newest(trx, read.sessionId);
            const quiet = newest !== null && newest < read.quietBefore;
            for (const { node } of open) if (!quiet) (node.metadata as Record<string, JsonValue>).pending = true;
            if (!quiet && newest !== null) read.onPending?.(newest);
          }
          return { nodes: nodes.map((n) => n.node), fetched: rows.length };
        })
        .catch((err: unknown) => {
          throw dbError(err, `reading nodes of session ${JSON.stringify(read.sessionId)} after seq ${cursor}`);
        });
      for (const node of page.nodes) {
        cursor = node.seq;
        yield node;
      }
      if (page.fetched < read.batchSize) return;
    }
  }

  async #newest(db: Kysely<any>, sessionId: string): Promise<number | null> {
    const bound = bindQuery(this.#m.nodes.text, { session_id: sessionId, after_seq: 0 });
    const r = await sql<{
      t: unknown;
    }>`select max(${sql.ref(`${QUERY_ALIAS}.created_at`)}) as t from (${bound}) as ${Q}`.execute(db);
    return secondsOf(r.rows[0]?.t ?? null, 's', `the newest created_at of session ${JSON.stringify(sessionId)}`);
  }

  /**
   * The computed change markers of the sessions in `scope`: a checksum of each session's row and
   * of its nodes' rows as the queries give them, in two statements (the nodes query runs once a
   * session, as a correlated subquery). Null-free; a session the sessions query does not give has none.
   */
  async markers(scope: MarkerScope, fingerprint: string): Promise<Map<string, ContentMarker>> {
    if (this.#m.markers !== null) return this.#queriedMarkers(this.#m.markers, scope, fingerprint);
    const S = this.#m.sessions;
    const N = this.#m.nodes;
    const outer = sql.id('entity_git_s');
    const sid = sql.ref('entity_git_s.id');
    const nodes = bindQuery(N.text, { session_id: sid, after_seq: 0 });
    const nodeFields = N.fields.map((f) => sql.ref(`${QUERY_ALIAS}.${f}`));
    const digest = digestSum(this.#engine, nodeFields);
    const maxTime = sql`max(${sql.ref(`${QUERY_ALIAS}.created_at`)})`;
    const summary =
      this.#engine === 'sqlite'
        ? sql`count(*) || '.' || ${digest} || '.' || coalesce(${maxTime}, '')`
        : sql`count(*)::text || '.' || ${digest} || '.' || coalesce(${maxTime}::text, '')`;
    const where = whereScope(scope, sid);
    const sessions = digestSum(
      this.#engine,
      S.fields.map((f) => sql.ref(`entity_git_s.${f}`)),
    );
    return this.#db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const out = new Map<string, ContentMarker>();
        const rows = await sql<Row>`select ${sid} as k, ${sessions} as h,
          (select ${summary} from (${nodes}) as ${Q}) as n
          from (${bindQuery(S.text, NONE)}) as ${outer} ${where} group by ${sid}`.execute(trx);
        const wanted = scope !== null && 'among' in scope ? new Set(scope.among) : null;
        for (const r of rows.rows) {
          if (wanted !== null && !wanted.has(text(r.k))) continue;
          // `count.digest.newest`: the time may hold a '.' of its own.
          const n = String(r.n);
          const [count, nodeDigest] = n.split('.', 2) as [string, string];
          const time = n.slice(count.length + nodeDigest.length + 2);
          const newest = time === '' ? null : secondsOf(time, 's', 'a newest created_at');
          out.set(text(r.k), { marker: `q1.${fingerprint}.${String(r.h)}.${count}.${nodeDigest}`, newest });
        }
        return out;
      });
  }

  /**
   * The markers given by the mapping's markers query: one statement, each session's row hashed
   * (every column, in the query's order) into its marker. A session the query gives no row for
   * has none (the full check).
   */
  async #queriedMarkers(
    M: ResolvedQuery,
    scope: MarkerScope,
    fingerprint: string,
  ): Promise<Map<string, ContentMarker>> {
    const id = sql.ref(`${QUERY_ALIAS}.id`);
    const rows = await sql<Row>`select * from (${bindQuery(M.text, NONE)}) as ${Q} ${whereScope(scope, id)}`
      .execute(this.#db)
      .then((r) => r.rows);
    const wanted = scope !== null && 'among' in scope ? new Set(scope.among) : null;
    const out = new Map<string, ContentMarker>();
    for (const r of rows) {
      const key = text(r.id);
      if (wanted !== null && !wanted.has(key)) continue;
      const newest = M.fields.includes('newest') ? newestOf(r.newest) : null;
      out.set(key, { marker: `m1.${fingerprint}.${rowDigest(r)}`, newest });
    }
    return out;
  }

  #decodeSession(r: Row): Session {
    const values = new RowValues(r, new Set(this.#m.sessions.json));
    const id = text(r.id);
    const where = `session ${JSON.stringify(id)}`;
    const session: Session = {
      id,
      title: textOf(values.column('title')),
      agent_id: textOf(values.column('agent_id')),
      model: textOf(values.column('model')),
      project_id: textOf(values.column('project_id')),
      head: nullableText(r.head ?? null),
      created_at: secondsOf(r.created_at, 's', `created_at of ${where}`) ?? 0,
      metadata: r.metadata === undefined ? null : values.column('metadata'),
    };
    try {
      validateSession(session);
    } catch (err) {
      throw invalidRow(err, `[sqlite] the row of ${where} is not a valid session`, { sessionId: id });
    }
    return session;
  }

  #decodeNode(r: Row): { node: DagNode; open: boolean } {
    const values = new RowValues(r, new Set(this.#m.nodes.json));
    const id = text(r.id);
    const where = `node ${JSON.stringify(id)}`;
    const role = r.role;
    if (typeof role !== 'string' || !ROLES.includes(role as Role))
      throw new EntityGitError(
        'DB_ERROR',
        `[sqlite] the row of ${where} has the role ${JSON.stringify(role ?? null)}, which is none of ${ROLES.join(', ')}; map it in mapping.nodes.query`,
        { value: role ?? null },
      );
    const metadata: Record<string, JsonValue> = {};
    const row = r.metadata === undefined ? null : values.column('metadata');
    if (row !== null) metadata.row = row;
    const tool = textOf(values.column('tool'));
    if (tool !== null && role === 'tool') metadata.tool = tool;
    const tokens = countOf(values.column('tokens'));
    if (tokens !== null) metadata.tokens = tokens;
    const inline = inlineNames(values.column('inline_tools'));
    if (inline.length > 0) metadata.inline_tools = inline;
    const node: DagNode = {
      id,
      session_id: text(r.session_id),
      seq: num(r.seq),
      role: role as Role,
      content: values.column('content'),
      predecessor: nullableText(r.predecessor),
      caller: nullableText(r.caller),
      created_at: secondsOf(r.created_at, 's', `created_at of ${where}`) ?? 0,
      metadata,
    };
    try {
      validateNode(node);
    } catch (err) {
      throw invalidRow(err, `[sqlite] the row of ${where} is not a valid node`, { nodeId: id });
    }
    return { node, open: truthy(r.open) };
  }
}

const NONE = { session_id: '', after_seq: 0 };

// Ids per `IN (…)` at most; more are served by one read of every session, kept to those asked for.
const MAX_IDS = 2000;

function whereScope(scope: MarkerScope, sid: RawBuilder<unknown>): RawBuilder<unknown> {
  if (scope === null) return sql``;
  if ('one' in scope) return sql`where ${sid} = ${scope.one}`;
  if (scope.among.length > MAX_IDS) return sql``;
  return scope.among.length === 0 ? sql`where 1 = 0` : sql`where ${sid} in (${sql.join(scope.among)})`;
}

/**
 * The SHA-1 of a row's canonical text: each column's name and value, tagged by type, strings
 * with their length first, so that one text is one row's only.
 */
function rowDigest(r: Row): string {
  let t = '';
  for (const [name, v] of Object.entries(r)) {
    t += `${name.length}:${name}`;
    if (v === null || v === undefined) t += 'n';
    else if (typeof v === 'string') t += `s${v.length}:${v}`;
    else if (typeof v === 'number' || typeof v === 'bigint') t += `i${v};`;
    else if (v instanceof Date) t += `d${v.getTime()};`;
    else if (v instanceof Uint8Array) t += `b${v.length}:${Buffer.from(v).toString('hex')}`;
    else {
      const other = typeof v === 'object' ? JSON.stringify(v) : String(v);
      t += `o${other.length}:${other}`;
    }
  }
  return createHash('sha1').update(t).digest('hex');
}

/** A newest time as seconds; null when there is none or it is no time (the marker then never turns quiet). */
function newestOf(raw: unknown): number | null {
  try {
    return secondsOf(raw, 's', 'a newest time');
  } catch {
    return null;
  }
}

/** A JSON array of tool names (text parsed, strings kept, anything else left out). */
function inlineNames(v: JsonValue): string[] {
  let list = v;
  if (typeof list === 'string') {
    try {
      list = JSON.parse(list) as JsonValue;
    } catch {
      return [];
    }
  }
  return Array.isArray(list) ? list.filter((n): n is string => typeof n === 'string' && n.trim() !== '') : [];
}

function truthy(v: unknown): boolean {
  return v === true || v === 1 || v === 1n || v === '1' || v === 't' || v === 'true';
}
