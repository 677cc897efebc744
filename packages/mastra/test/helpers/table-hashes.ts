import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';

const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');

/**
 * A hash of every table of a SQLite file (its schema and every row, in rowid order), read on a
 * connection of its own: equal before and after a mirror, nothing was written.
 */
export function sqliteTableHashes(file: string): Record<string, string> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const out: Record<string, string> = {};
    const tables = db.prepare("select name, sql from sqlite_master where type = 'table' order by name").all() as Array<{
      name: string;
      sql: string;
    }>;
    for (const t of tables) {
      const rows = db.prepare(`select * from "${t.name.replaceAll('"', '""')}" order by rowid`).all();
      out[t.name] = sha1(`${t.sql}\n${JSON.stringify(rows)}`);
    }
    return out;
  } finally {
    db.close();
  }
}

/** The same for a PostgreSQL database: every table outside the system schemas, columns and rows. */
export async function postgresTableHashes(url: string): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const out: Record<string, string> = {};
    const { rows: tables } = await client.query<{ schema: string; name: string }>(
      `select table_schema as schema, table_name as name from information_schema.tables
       where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')
       order by 1, 2`,
    );
    for (const { schema, name } of tables) {
      const q = `${client.escapeIdentifier(schema)}.${client.escapeIdentifier(name)}`;
      const { rows: columns } = await client.query(
        `select column_name, data_type from information_schema.columns
         where table_schema = $1 and table_name = $2 order by ordinal_position`,
        [schema, name],
      );
      const { rows } = await client.query(
        `select coalesce(md5(string_agg(t::text, E'\\n' order by t::text)), '') as h from ${q} t`,
      );
      out[`${schema}.${name}`] = sha1(`${JSON.stringify(columns)}\n${rows[0].h}`);
    }
    return out;
  } finally {
    await client.end();
  }
}
