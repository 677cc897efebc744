import { EntityGitError, type DagNode, type Session } from '@entity-git/core';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { dbError } from '../engine.js';
import { text } from '../rows.js';
import { secondsOf } from './time-values.js';
import { PREV_ALIAS, RANK_ALIAS, decodeMappedNode, decodeMappedSession, type MappedNode } from './mapped-rows.js';
import type { ResolvedMapping, ResolvedNodesMapping } from './resolved-mapping.js';

// Every query names its tables and columns through `sql.id` / `sql.table`, from the resolved
// mapping alone; nothing here writes.

const ids = (columns: readonly string[]) =>
  sql.join(
    columns.map((c) => sql.id(c)),
    sql`, `,
  );

/** Session ids in creation order (time, then id), as entity-git's own schema lists them. */
export async function listMappedSessions(db: Kysely<any>, m: ResolvedMapping): Promise<string[]> {
  const S = m.sessions;
  try {
    const rows = await sql<Record<string, unknown>>`select ${sql.id(S.id)} as id from ${sql.table(S.table)}
      order by ${sql.id(S.created_at)}, ${sql.id(S.id)}`.execute(db);
    return rows.rows.map((r) => text(r.id));
  } catch (err) {
    throw dbError(err, 'listing sessions');
  }
}

export async function getMappedSession(
  db: Kysely<any>,
  m: ResolvedMapping,
  sessionId: string,
): Promise<Session | null> {
  const S = m.sessions;
  let row: Record<string, unknown> | undefined;
  try {
    row = (
      await sql<Record<string, unknown>>`select ${ids(S.columns)} from ${sql.table(S.table)}
        where ${sql.id(S.id)} = ${sessionId}`.execute(db)
    ).rows[0];
  } catch (err) {
    throw dbError(err, `reading session ${JSON.stringify(sessionId)}`);
  }
  return row === undefined ? null : decodeMappedSession(row, m.sessions);
}

export async function getMappedHead(db: Kysely<any>, m: ResolvedMapping, sessionId: string): Promise<string | null> {
  // A head may be a key of a JSON column: read as the session's row is.
  if (m.sessions.head.length === 0) return null;
  return (await getMappedSession(db, m, sessionId))?.head ?? null;
}

/** One read of a session's nodes. */
export interface MappedRead {
  sessionId: string;
  /** Exclusive lower bound of the seq. */
  afterSeq: number;
  batchSize: number;
  /**
   * Seconds since the epoch: a session whose newest row is older is quiet, and its open nodes
   * are complete (docs/design.md, 'Turns, commits and branches': Completeness).
   */
  quietBefore: number;
  /** Told the session's newest row time when open nodes were left pending. */
  onPending?: (newest: number) => void;
}

/**
 * The nodes of a session after `afterSeq`, in pages of `batchSize`. A seq column pages by keyset,
 * as entity-git's own schema does. A derived seq (the rank by time, then id) is computed in SQL
 * for each page; each page after the first starts again at the last node yielded, and when that
 * is not where it was (a row with an older time was written between two pages, which renumbers
 * the rows after it) the read stops with a `DB_ERROR`: the caller reads again, and never gets a
 * node twice or not at all.
 */
export async function* mappedNodesAfter(db: Kysely<any>, m: ResolvedMapping, read: MappedRead): AsyncIterable<DagNode> {
  const { sessionId, afterSeq, batchSize } = read;
  const N = m.nodes;
  let cursor = afterSeq;
  let last: string | null = null;
  for (;;) {
    const overlap = last !== null && N.seq.kind === 'rank';
    const limit = batchSize + (overlap ? 1 : 0);
    // The page and which of its nodes are continued are read in one snapshot: a reply written
    // between the two would otherwise mark its prompt complete while the reply is not read yet.
    const { page, fetched } = await db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        let rows: Record<string, unknown>[];
        try {
          rows = (await nodesPage(N, sessionId, overlap ? cursor - 1 : cursor, limit).execute(trx)).rows;
        } catch (err) {
          throw dbError(err, `reading nodes of session ${JSON.stringify(sessionId)} after seq ${cursor}`);
        }
        const fetched = rows.length;
        if (overlap) {
          if (rows.length === 0 || text(rows[0]![N.id]) !== last) throw renumbered(sessionId);
          rows = rows.slice(1);
        }
        const page = rows.map((r) => decodeMappedNode(r, N));
        await markOpen(trx, N, read, page);
        return { page, fetched };
      })
      .catch((err: unknown) => {
        throw dbError(err, `reading nodes of session ${JSON.stringify(sessionId)} after seq ${cursor}`);
      });
    for (const { node } of page) {
      cursor = node.seq;
      last = node.id;
      yield node;
    }
    if (fetched < limit) return;
  }
}

function renumbered(sessionId: string): EntityGitError<'DB_ERROR'> {
  return new EntityGitError(
    'DB_ERROR',
    `[sqlite] the nodes of session ${JSON.stringify(sessionId)} were renumbered while they were read (a row older than others was written); read them again`,
    { sessionId },
  );
}

function nodesPage(
  N: ResolvedNodesMapping,
  sessionId: string,
  after: number,
  limit: number,
): RawBuilder<Record<string, unknown>> {
  const table = sql.table(N.table);
  const sid = sql.id(N.session_id);
  const order = sessionOrder(N);
  // A linear session: each row continues the one before it in the session's order.
  const prev = N.linear ? sql`, lag(${sql.id(N.id)}) over (order by ${order}) as ${sql.id(PREV_ALIAS)}` : sql``;
  if (N.seq.kind === 'column') {
    const seq = sql.id(N.seq.column);
    if (!N.linear)
      return sql`select ${ids(N.columns)} from ${table} where ${sid} = ${sessionId} and ${seq} > ${after - N.seq.shift}
      order by ${seq} limit ${limit}`;
    return sql`select * from (select ${ids(N.columns)}${prev} from ${table} where ${sid} = ${sessionId}) as linear
      where ${seq} > ${after - N.seq.shift} order by ${seq} limit ${limit}`;
  }
  const rank = sql.id(RANK_ALIAS);
  return sql`select * from (select ${ids(N.columns)}, row_number() over (order by ${order}) as ${rank}${prev}
      from ${table} where ${sid} = ${sessionId}) as ranked where ${rank} > ${after} order by ${rank} limit ${limit}`;
}

/** The order of a session's rows: the seq column, or the rank's time then id. */
function sessionOrder(N: ResolvedNodesMapping, descending = false): RawBuilder<unknown> {
  const dir = sql.raw(descending ? 'desc' : 'asc');
  if (N.seq.kind === 'column') return sql`${sql.id(N.seq.column)} ${dir}`;
  const id = N.idCollation === null ? sql.id(N.id) : sql`${sql.id(N.id)} collate ${sql.id(N.idCollation)}`;
  const nulls = sql.raw(descending ? 'nulls last' : 'nulls first');
  return sql`${sql.id(N.seq.column)} ${dir} ${nulls}, ${id} ${dir}`;
}

// Ids per `IN (…)`: far below SQLite's 32,766 and PostgreSQL's 65,535 bound parameters.
const ID_CHUNK = 500;

/**
 * Sets `metadata.pending` on the page's open candidates that no node continues from yet (no row
 * of the session names them as its predecessor): one query for the page, over its candidates;
 * none while the session is quiet (its newest row older than `read.quietBefore`), so a turn a
 * crashed host left open is committed, and committed again by the usual rule when rows follow.
 */
async function markOpen(db: Kysely<any>, N: ResolvedNodesMapping, read: MappedRead, page: MappedNode[]): Promise<void> {
  const { sessionId } = read;
  const candidates = page.filter((p) => p.openCandidate);
  if (candidates.length === 0) return;
  const newest = await newestRow(db, N, sessionId);
  if (newest !== null && newest < read.quietBefore) return;
  const continued = new Set<string>();
  if (N.linear) {
    // Every row but the session's last is continued by the one after it.
    const last = await lastRow(db, N, sessionId);
    for (const { node } of candidates) if (node.id !== last) continued.add(node.id);
  }
  const pred = N.predecessor === null ? null : sql.id(N.predecessor);
  for (let i = 0; pred !== null && i < candidates.length; i += ID_CHUNK) {
    const chunk = candidates.slice(i, i + ID_CHUNK).map((c) => c.node.id);
    try {
      const rows = await sql<Record<string, unknown>>`select distinct ${pred} as p from ${sql.table(N.table)}
        where ${sql.id(N.session_id)} = ${sessionId} and ${pred} in (${sql.join(chunk)})`.execute(db);
      for (const r of rows.rows) continued.add(text(r.p));
    } catch (err) {
      throw dbError(err, `reading which nodes of session ${JSON.stringify(sessionId)} are continued`);
    }
  }
  let pending = false;
  for (const { node } of candidates) {
    if (continued.has(node.id)) continue;
    (node.metadata as Record<string, unknown>).pending = true;
    pending = true;
  }
  if (pending && newest !== null) read.onPending?.(newest);
}

/** The id of the session's last row in its order (null: none). */
async function lastRow(db: Kysely<any>, N: ResolvedNodesMapping, sessionId: string): Promise<string | null> {
  try {
    const rows = await sql<{ id: unknown }>`select ${sql.id(N.id)} as id from ${sql.table(N.table)}
      where ${sql.id(N.session_id)} = ${sessionId} order by ${sessionOrder(N, true)} limit 1`.execute(db);
    return rows.rows[0] === undefined ? null : text(rows.rows[0].id);
  } catch (err) {
    throw dbError(err, `reading the last row of session ${JSON.stringify(sessionId)}`);
  }
}

/** The time of the session's newest row, in seconds (null: none, or none readable). */
async function newestRow(db: Kysely<any>, N: ResolvedNodesMapping, sessionId: string): Promise<number | null> {
  try {
    const rows = await sql<{ t: unknown }>`select max(${sql.id(N.created_at)}) as t from ${sql.table(N.table)}
      where ${sql.id(N.session_id)} = ${sessionId}`.execute(db);
    return secondsOf(
      rows.rows[0]?.t ?? null,
      N.createdFormat,
      `the newest created_at of session ${JSON.stringify(sessionId)}`,
    );
  } catch (err) {
    throw dbError(err, `reading the newest row of session ${JSON.stringify(sessionId)}`);
  }
}
