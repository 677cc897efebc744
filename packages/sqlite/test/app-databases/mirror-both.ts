// The stores of the mapping's tests made from the same statements in SQLite and PostgreSQL, and
// every session of each mirrored: the same rows must give the same commits on both, and the
// tables are never written.
import { join } from 'node:path';
import { reconcile } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { type MappingInput, type SqlStore, openPostgres, openSqlite } from '../../src/index.js';
import { freshDatabase } from '../helpers/postgres.js';
import type { StoreSql } from './fixtures/query-stores.js';
import { tablesHash } from './fixtures/table-hash.js';

export async function mirrorAll(store: SqlStore, root: string): Promise<[string, string][]> {
  const mirror = createNodeMirror({ dag: store.dag, root });
  const report = await reconcile({ dag: store.dag, mirror });
  return report.entries.map((e) => [e.sessionId, e.action]);
}

/** A commit message's trailer: what every commit of a turn ends with. */
export const trailer = (session: string, node: string, seq: number, turn: number) =>
  ['', `Session: ${session}`, `Turn: ${turn}`, `Node: ${node}`, `Seq: ${seq}`].join('\n');

/** Stores made in `dir`: a SQLite file from the statements, and both engines mirrored. */
export function storesIn(dir: string) {
  let n = 0;
  function sqliteStore(statements: StoreSql): string {
    const file = join(dir, `store-${++n}.sqlite`);
    const db = new Database(file);
    for (const s of statements.sqlite) db.exec(s);
    db.close();
    return file;
  }

  /** Every session of the store mirrored, with the reconcile's report, in SQLite and PostgreSQL. */
  async function mirrorBoth(statements: StoreSql, mapping: MappingInput) {
    const file = sqliteStore(statements);
    const before = tablesHash(file);
    const sqliteRoot = join(dir, `sqlite-${n}`);
    const lite = await openSqlite({ file, mapping });
    const report = await mirrorAll(lite, sqliteRoot);
    await lite.close();
    expect(tablesHash(file)).toBe(before);

    const database = await freshDatabase();
    const { default: Pg } = await import('pg');
    const client = new Pg.Client({ connectionString: database.url });
    await client.connect();
    const postgresRoot = join(dir, `postgres-${n}`);
    try {
      for (const s of statements.postgres) await client.query(s);
      const snapshot = async () => {
        const tables = await client.query(
          `select table_name from information_schema.tables where table_schema = 'public' order by 1`,
        );
        const out: unknown[] = [];
        for (const { table_name } of tables.rows)
          out.push(table_name, (await client.query(`select * from "${table_name}" order by 1`)).rows);
        return JSON.stringify(out);
      };
      const rowsBefore = await snapshot();
      const pg = await openPostgres({ connectionString: database.url, mapping });
      const pgReport = await mirrorAll(pg, postgresRoot);
      await pg.close();
      expect(pgReport).toEqual(report);
      expect(await snapshot()).toBe(rowsBefore);
    } finally {
      await client.end();
      await database.drop();
    }
    return { report, sqliteRoot, postgresRoot };
  }

  return { sqliteStore, mirrorBoth };
}
