import { createHash } from 'node:crypto';
import stableStringify from 'fast-json-stable-stringify';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { SqlEngine } from '../engine.js';
import { text } from '../rows.js';
import { ROWS_CHECKSUM_FUNCTION } from './rows-checksum.js';
import { secondsOf, type TimeFormat } from '../mapping/time-values.js';

/**
 * Change markers computed from the rows themselves, for a database entity-git keeps no triggers
 * in (an application's own tables, or entity-git's layout made by the application): per session,
 * a checksum of its row and, over its nodes, their count and a sum of a 64-bit digest of each
 * row — every column the reads select, the row's own id among them. Nothing is written: SQLite
 * sums with a function on the connection (`rows-checksum.ts`), PostgreSQL with built-in functions
 * (`md5` of the row's text, its first 64 bits as a number, summed exactly as `numeric`).
 *
 * Equal rows give an equal marker, so a write and its undoing give back the marker before them
 * (the mirror reads a marker before and after a sync's rows for that reason). Rows that differ give
 * the same marker only when the digests of the rows that changed sum to the same value: for a
 * digest that behaves as a random 64-bit value, 2^-64 (about 5 × 10^-20) for each change checked.
 */

/** One table the markers cover: its rows grouped by `key` (the session id), over `columns`. */
export interface MarkedTable {
  readonly table: string;
  readonly key: string;
  readonly columns: readonly string[];
  /** A time column whose newest value per session is read beside the checksum; default none. */
  readonly newest?: string;
  /** How `newest` is stored (default seconds). */
  readonly newestFormat?: TimeFormat;
}

/** A session's computed marker, and the time of its newest node row when the table names one. */
export interface ContentMarker {
  readonly marker: string;
  readonly newest: number | null;
}

/** The two tables a session's marker is computed over. */
export interface MarkedTables {
  readonly sessions: MarkedTable;
  readonly nodes: MarkedTable;
}

/** Which sessions: one, some (ids), or every one (null). */
export type MarkerScope = { readonly one: string } | { readonly among: readonly string[] } | null;

/** Bumped when the text a marker is computed from changes: a marker of another version never matches. */
const VERSION = 'c1';

// Ids per `IN (…)`: far below SQLite's 32,766 and PostgreSQL's 65,535 bound parameters. More ids
// than a few chunks are served by one read of the whole table, kept to those asked for.
const ID_CHUNK = 500;
const MAX_CHUNKS = 4;

/**
 * The part of the marker that says how the rows are read: the engine, the tables and columns,
 * and whatever else decides the nodes they give (a mapping, the value formats). A mirror synced
 * under one configuration is never judged unchanged under another; the same configuration with
 * its keys in another order (a config file rewritten by an editor) is the same fingerprint.
 */
export function readingFingerprint(engine: SqlEngine, tables: MarkedTables, reading: unknown): string {
  const digest = createHash('sha1').update(stableStringify({ engine, tables, reading }));
  return digest.digest('hex').slice(0, 16);
}

/**
 * The markers of the sessions in `scope` that have a row (a session without one has none), read
 * in one snapshot of both tables. `'absent'` when the engine cannot compute them (SQLite without
 * the function on the connection, a PostgreSQL without `md5`).
 */
export async function readContentMarkers(
  {
    db,
    engine,
    tables,
    fingerprint,
  }: { db: Kysely<any>; engine: SqlEngine; tables: MarkedTables; fingerprint: string },
  scope: MarkerScope,
): Promise<Map<string, ContentMarker> | 'absent'> {
  try {
    return await db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const sessions = await checksums(trx, engine, tables.sessions, scope);
        const nodes = await checksums(trx, engine, tables.nodes, scope);
        const out = new Map<string, ContentMarker>();
        for (const [id, row] of sessions) {
          const n = nodes.get(id) ?? { n: '0', h: '0', t: null };
          out.set(id, { marker: `${VERSION}.${fingerprint}.${row.h}.${n.n}.${n.h}`, newest: n.t });
        }
        return out;
      });
  } catch (err) {
    if (cannotCompute(err)) return 'absent';
    throw err;
  }
}

async function checksums(
  db: Kysely<any>,
  engine: SqlEngine,
  t: MarkedTable,
  scope: MarkerScope,
): Promise<Map<string, { n: string; h: string; t: number | null }>> {
  const out = new Map<string, { n: string; h: string; t: number | null }>();
  const wanted = scope !== null && 'among' in scope ? new Set(scope.among) : null;
  const filters: (RawBuilder<unknown> | null)[] =
    scope === null
      ? [null]
      : 'one' in scope
        ? [sql`where ${sql.id(t.key)} = ${scope.one}`]
        : scope.among.length > ID_CHUNK * MAX_CHUNKS
          ? [null]
          : chunks(scope.among).map((ids) => sql`where ${sql.id(t.key)} in (${sql.join(ids)})`);
  for (const where of filters) {
    const newest = t.newest === undefined ? sql`null` : sql`max(${sql.id(t.newest)})`;
    const rows = await sql<{
      k: unknown;
      n: unknown;
      h: unknown;
      t: unknown;
    }>`select ${sql.id(t.key)} as k, count(*) as n,
      ${digestSum(engine, t.columns)} as h, ${newest} as t from ${sql.table(t.table)} ${where ?? sql``} group by ${sql.id(t.key)}`.execute(
      db,
    );
    for (const r of rows.rows) {
      const id = text(r.k);
      if (wanted === null || wanted.has(id))
        out.set(id, { n: String(r.n), h: String(r.h), t: newestOf(r.t, t.newestFormat ?? 's') });
    }
  }
  return out;
}

/** A newest time as seconds; null when there is none or it is no time (the marker then never turns quiet). */
function newestOf(raw: unknown, format: TimeFormat): number | null {
  try {
    return secondsOf(raw, format, 'a newest created_at');
  } catch {
    return null;
  }
}

/** The order-free sum of the rows' digests, as text: `'0'` for no row. Columns by name, or as SQL. */
export function digestSum(engine: SqlEngine, columns: readonly (string | RawBuilder<unknown>)[]): RawBuilder<unknown> {
  const list = sql.join(columns.map((c) => (typeof c === 'string' ? sql.id(c) : c)));
  if (engine === 'sqlite') return sql`${sql.raw(ROWS_CHECKSUM_FUNCTION)}(${list})`;
  // A record's text form quotes what needs quoting and leaves NULL empty, so it is one row's only.
  return sql`coalesce(sum(('x' || substr(md5(row(${list})::text), 1, 16))::bit(64)::bigint::numeric), 0)::text`;
}

function chunks(ids: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < ids.length; i += ID_CHUNK) out.push(ids.slice(i, i + ID_CHUNK));
  return out;
}

/** SQLite "no such function" (the function not registered on this connection), PostgreSQL 42883. */
export function cannotCompute(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === '42883' || /no such function/i.test(String((err as Error)?.message));
}
