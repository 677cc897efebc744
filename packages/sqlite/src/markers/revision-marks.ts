import { sql, type Kysely } from 'kysely';
import type { SqlEngine } from '../engine.js';
import { text } from '../rows.js';
import type { SchemaNames } from '../schema-names.js';

/**
 * The per-session change markers of a database entity-git created: one row per session
 * (`session_id`, `rev`), kept by triggers on the sessions and nodes tables, so every write bumps
 * it — the writer's appends, fills and head moves, and just as well an UPDATE or DELETE typed by
 * hand or run by another program. A row is never deleted (deleting a session bumps it too) and a
 * new row starts at a random 48-bit value, so a database recreated with the same session ids does
 * not hand out the revisions of the old one. PostgreSQL's TRUNCATE, which fires no row trigger,
 * bumps every row.
 *
 * Lives beside the sessions table (same schema when that table is qualified). A database without
 * the table (made by another program, or by entity-git before migration 0002) has its markers
 * computed from its rows instead (`content-markers.ts`); a session without a row here has none.
 */
export const MARKS_TABLE = 'entity_git_session_marks';

/** Where the markers of a database laid out as `names` live: beside its sessions table. */
export function marksTableOf(names: SchemaNames): string {
  const table = names.sessions.table;
  const dot = table.lastIndexOf('.');
  return dot < 0 ? MARKS_TABLE : `${table.slice(0, dot)}.${MARKS_TABLE}`;
}

/** `a.b` as `"a"."b"` (a name's own quotes doubled). */
function quoted(name: string): string {
  const dot = name.lastIndexOf('.');
  const one = (part: string) => `"${part.replace(/"/g, '""')}"`;
  return dot < 0 ? one(name) : `${one(name.slice(0, dot))}.${one(name.slice(dot + 1))}`;
}

const baseName = (table: string) => table.slice(table.lastIndexOf('.') + 1).replace(/[^A-Za-z0-9_]/g, '_');
/** A start no other database's session is likely to have reached: 2^48 values. */
const RANDOM_START = {
  sqlite: 'abs(random() % 281474976710656)',
  postgres: 'floor(random() * 281474976710656)::bigint',
};

/** Migration 0002: the markers table, a row for every existing session, and the triggers. */
export async function createChangeMarks(db: Kysely<any>, engine: SqlEngine, names: SchemaNames): Promise<void> {
  const S = names.sessions;
  const N = names.nodes;
  const run = (text: string) => sql.raw(text).execute(db);
  let marks = quoted(marksTableOf(names));
  let schema = '';
  if (engine === 'postgres') {
    // Qualified in the trigger functions: they run under the writer's search_path, not ours.
    const dot = S.table.lastIndexOf('.');
    const current =
      dot < 0 ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]!.s : S.table.slice(0, dot);
    schema = `${quoted(current)}.`;
    marks = `${schema}${quoted(MARKS_TABLE)}`;
  }
  const start = RANDOM_START[engine];
  await run(
    `create table ${marks} (session_id text primary key not null, rev ${engine === 'postgres' ? 'bigint' : 'integer'} not null)`,
  );
  await run(`insert into ${marks} (session_id, rev) select ${quoted(S.id)}, ${start} from ${quoted(S.table)}`);
  const bump = (key: string) =>
    engine === 'postgres'
      ? `insert into ${marks} as m (session_id, rev) values (${key}, ${start}) on conflict (session_id) do update set rev = m.rev + 1;`
      : `insert into ${quoted(MARKS_TABLE)} (session_id, rev) values (${key}, ${start}) on conflict (session_id) do update set rev = rev + 1;`;
  for (const [table, key] of [
    [N.table, N.session_id],
    [S.table, S.id],
  ] as const) {
    const name = `${baseName(table)}_entity_git_mark`;
    const k = quoted(key);
    if (engine === 'sqlite') {
      // A trigger lives in its table's schema; its body names tables of that schema unqualified.
      const dot = table.lastIndexOf('.');
      const trigger = (suffix: string) =>
        dot < 0 ? quoted(`${name}_${suffix}`) : quoted(`${table.slice(0, dot)}.${name}_${suffix}`);
      const on = quoted(table.slice(dot + 1));
      await run(`create trigger ${trigger('insert')} after insert on ${on} begin ${bump(`new.${k}`)} end`);
      await run(
        `create trigger ${trigger('update')} after update on ${on} begin ${bump(`old.${k}`)} ${bump(`new.${k}`)} end`,
      );
      await run(`create trigger ${trigger('delete')} after delete on ${on} begin ${bump(`old.${k}`)} end`);
    } else {
      const fn = `${schema}${quoted(name)}`;
      await run(`create function ${fn}() returns trigger language plpgsql as $entity_git$
begin
  if tg_op in ('UPDATE', 'DELETE') then ${bump(`old.${k}`)} end if;
  if tg_op in ('INSERT', 'UPDATE') then ${bump(`new.${k}`)} end if;
  return null;
end $entity_git$`);
      await run(
        `create trigger ${quoted(name)} after insert or update or delete on ${quoted(table)} for each row execute function ${fn}()`,
      );
      const all = `${schema}${quoted(`${name}_truncate`)}`;
      await run(`create function ${all}() returns trigger language plpgsql as $entity_git$
begin
  update ${marks} set rev = rev + 1;
  return null;
end $entity_git$`);
      await run(
        `create trigger ${quoted(`${name}_truncate`)} after truncate on ${quoted(table)} for each statement execute function ${all}()`,
      );
    }
  }
}

/**
 * The marker of a session: its `rev` as text; null when the session has no row or the read failed
 * (a busy or unreachable database: no marker this time, the full check). `'absent'` when the
 * database has no markers table (SQLite "no such table", PostgreSQL 42P01): none to ask for again.
 */
export async function readChangeMarker(
  db: Kysely<any>,
  names: SchemaNames,
  sessionId: string,
): Promise<string | null | 'absent'> {
  try {
    const row = await db
      .selectFrom(marksTableOf(names))
      .select(sql<unknown>`rev`.as('rev'))
      .where(sql.id('session_id'), '=', sessionId)
      .executeTakeFirst();
    return row === undefined || row.rev === null ? null : String(row.rev);
  } catch (err) {
    if (noTable(err)) return 'absent';
    return null;
  }
}

/**
 * Every row of the markers table, as {@link readChangeMarker} reads each (a session without a row
 * is left out); `'absent'` without the table. One read: the table holds a short row a session.
 * A failed read rejects.
 */
export async function readAllChangeMarkers(
  db: Kysely<any>,
  names: SchemaNames,
): Promise<Map<string, string> | 'absent'> {
  try {
    const rows = await db
      .selectFrom(marksTableOf(names))
      .select([sql<unknown>`session_id`.as('id'), sql<unknown>`rev`.as('rev')])
      .execute();
    const out = new Map<string, string>();
    for (const r of rows) if (r.rev !== null) out.set(text(r.id), String(r.rev));
    return out;
  } catch (err) {
    if (noTable(err)) return 'absent';
    throw err;
  }
}

function noTable(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === '42P01' || /no such table/i.test(String((err as Error)?.message));
}
