import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';

/**
 * Every table of a SQLite file and a hash of all its rows (the schema included), read through
 * a read-only connection: equal before and after a mirror when the mirror wrote nothing.
 */
export function sqliteRows(file: string): Record<string, string> {
  const db = new Database(file, { readonly: true });
  try {
    const out: Record<string, string> = {};
    const tables = db.prepare(`select name, sql from sqlite_master where type = 'table' order by name`).all() as Array<{
      name: string;
      sql: string;
    }>;
    for (const { name, sql } of tables) {
      const rows = db.prepare(`select * from "${name}" order by rowid`).raw().all();
      const h = createHash('sha256').update(sql);
      for (const row of rows as unknown[][])
        h.update(JSON.stringify(row.map((v) => (Buffer.isBuffer(v) ? v.toString('base64') : v))));
      out[name] = `${rows.length}:${h.digest('hex')}`;
    }
    return out;
  } finally {
    db.close();
  }
}
