import { sql, type Kysely } from 'kysely';
import { text } from '../rows.js';
import type { ResolvedMapping } from './resolved-mapping.js';

/**
 * What each session of an application's tables looks like now, for `watchDagChanges`: its row
 * as read (a title set later, the head moved, its metadata) and, from one grouped read of the
 * nodes, their count, latest time and highest seq column. A row rewritten in place with the
 * same time changes none of these: the watch's window of recently active sessions covers it.
 */
export async function mappedFingerprints(db: Kysely<any>, m: ResolvedMapping): Promise<Map<string, string>> {
  const S = m.sessions;
  const N = m.nodes;
  const out = new Map<string, string>();
  const sessions = await sql<Record<string, unknown>>`select ${sql.join(S.columns.map((c) => sql.id(c)))}
    from ${sql.table(S.table)}`.execute(db);
  for (const r of sessions.rows) out.set(text(r[S.id]), JSON.stringify(S.columns.map((c) => String(r[c] ?? ''))));
  const seq = N.seq.kind === 'column' ? sql`max(${sql.id(N.seq.column)})` : sql`null`;
  const nodes = await sql<Record<string, unknown>>`select ${sql.id(N.session_id)} as sid, count(*) as n,
    max(${sql.id(N.created_at)}) as t, ${seq} as s from ${sql.table(N.table)} group by ${sql.id(N.session_id)}`.execute(
    db,
  );
  for (const r of nodes.rows) {
    const id = text(r.sid);
    out.set(id, `${out.get(id) ?? ''}|${r.n}:${r.t}:${r.s}`);
  }
  return out;
}
