// An application's database for the change-marker tests: made with the shape's DDL, written on a
// connection of the application's own (SQL as the application runs it: INSERT OR REPLACE in SQLite,
// an upsert in PostgreSQL), and read by a store opened read-only, as `entity-git verify` opens it.
import { join } from 'node:path';
import type { MarkerEdits, MarkerNode } from '@entity-git/test-utils';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { openPostgres, openSqlite, type SqlEngine, type SqlStore } from '../../src/index.js';
import { ownLayoutShape, type AppShape, type Row } from './app-shapes.js';
import { freshDatabase } from './postgres.js';
import { tempDir } from './temp.js';

export interface AppDatabase {
  /** The application's connection: what writes the rows. */
  app: Kysely<any>;
  /** entity-git's read-only store over the same database. */
  store: SqlStore;
  edits: MarkerEdits;
  /** The SQLite file (null on PostgreSQL). */
  file: string | null;
  /** PostgreSQL's URL (null on SQLite). */
  url: string | null;
  cleanup: () => Promise<void>;
}

export async function openAppDatabase(shape: AppShape, engine: SqlEngine): Promise<AppDatabase> {
  if (engine === 'sqlite') {
    const tmp = tempDir('entity-git-adopted-');
    const file = join(tmp.dir, 'app.sqlite');
    const raw = new Database(file, { timeout: 10_000 });
    raw.pragma('journal_mode = WAL');
    raw.exec(shape.ddl('sqlite') as string);
    const app = new Kysely<any>({ dialect: new SqliteDialect({ database: raw }) });
    const store = await openSqlite({ file, readonly: true, ...shape.options });
    return {
      app,
      store,
      edits: appEdits(app, engine, shape),
      file,
      url: null,
      cleanup: async () => {
        await store.close();
        await app.destroy();
        tmp.remove();
      },
    };
  }
  const database = await freshDatabase();
  const app = new Kysely<any>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 2 }) }),
  });
  for (const statement of shape.ddl('postgres') as string[]) await sql.raw(statement).execute(app);
  const store = await openPostgres({ connectionString: database.url, readonly: true, ...shape.options });
  return {
    app,
    store,
    edits: appEdits(app, engine, shape),
    file: null,
    url: database.url,
    cleanup: async () => {
      await store.close();
      await app.destroy();
      await database.drop();
    },
  };
}

/** The suite's writes as the application makes them, each its own statement. */
export function appEdits(app: Kysely<any>, engine: SqlEngine, shape: AppShape): MarkerEdits {
  const S = shape.sessions;
  const N = shape.nodes;
  // Where each node was written: an upsert saves it again at its place.
  const written = new Map<string, { node: MarkerNode; position: number }>();
  const upsert = (row: Row) =>
    engine === 'sqlite'
      ? app.replaceInto(N.table).values(row).execute()
      : app
          .insertInto(N.table)
          .values(row)
          .onConflict((oc) => oc.column(N.id).doUpdateSet(row))
          .execute();
  return {
    createSession: (id, title) =>
      app
        .insertInto(S.table)
        .values(shape.sessionRow(id, title, 1_700_000_000))
        .execute(),
    append: async (node) => {
      const position = [...written.values()].filter((w) => w.node.session_id === node.session_id).length + 1;
      written.set(node.id, { node, position });
      await app.insertInto(N.table).values(shape.nodeRow(node, position)).execute();
    },
    setContent: async (_sessionId, nodeId, content) => {
      const w = written.get(nodeId)!;
      w.node = { ...w.node, content };
      await app.updateTable(N.table).set(shape.contentSet(w.node)).where(N.id, '=', nodeId).execute();
    },
    setHead: (sessionId, nodeId) =>
      app
        .updateTable(S.table)
        .set({ [S.head]: nodeId })
        .where(S.id, '=', sessionId)
        .execute(),
    replace: async (node) => {
      const w = written.get(node.id)!;
      w.node = node;
      await upsert(shape.nodeRow(node, w.position));
    },
    setTitle: (sessionId, title) =>
      app
        .updateTable(S.table)
        .set({ [S.title]: title })
        .where(S.id, '=', sessionId)
        .execute(),
    deleteNode: async (_sessionId, nodeId) => {
      written.delete(nodeId);
      await app.deleteFrom(N.table).where(N.id, '=', nodeId).execute();
    },
  };
}

/**
 * For the conformance suite of a store with a writer: the writes it has no method for, in SQL
 * under the store's names — a node's row saved again whole at its seq, a title edited, a row
 * deleted.
 */
export function rowEditsOf(store: SqlStore): Pick<MarkerEdits, 'replace' | 'setTitle' | 'deleteNode'> {
  const { db, names, engine } = store;
  const shape = ownLayoutShape('', names, true);
  const N = names.nodes;
  return {
    replace: async (node) => {
      const at = await db
        .selectFrom(N.table)
        .select(sql.id(N.seq).as('seq'))
        .where(N.id, '=', node.id)
        .executeTakeFirstOrThrow();
      const row = shape.nodeRow(node, Number(at.seq));
      await (engine === 'sqlite'
        ? db.replaceInto(N.table).values(row).execute()
        : db
            .insertInto(N.table)
            .values(row)
            .onConflict((oc) => oc.column(N.id).doUpdateSet(row))
            .execute());
    },
    setTitle: (sessionId, title) =>
      db
        .updateTable(names.sessions.table)
        .set({ [names.sessions.title!]: title })
        .where(names.sessions.id, '=', sessionId)
        .execute(),
    deleteNode: (_sessionId, nodeId) => db.deleteFrom(N.table).where(N.id, '=', nodeId).execute(),
  };
}
