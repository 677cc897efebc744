import { sql } from 'kysely';
import { openPostgres, type SchemaNamesInput, type SqlStore } from '../../src/index.js';
import { freshDatabase } from './postgres.js';

/**
 * One database and one open store per suite, emptied before each test: a database per test costs
 * ~70 ms to create and drop, TRUNCATE a few. `close` drops the database (call it in `afterAll`).
 */
export function reusablePostgres(names?: SchemaNamesInput): {
  empty: () => Promise<SqlStore>;
  close: () => Promise<void>;
} {
  let opened: Promise<{ store: SqlStore; drop: () => Promise<void> }> | undefined;
  const open = () =>
    (opened ??= (async () => {
      const database = await freshDatabase();
      const store = await openPostgres({ connectionString: database.url, names, migrate: true });
      return { store, drop: database.drop };
    })());
  return {
    empty: async () => {
      const { store } = await open();
      const { nodes, sessions, projects } = store.names;
      await sql`truncate table ${sql.table(nodes.table)}, ${sql.table(sessions.table)}, ${sql.table(projects.table)}`.execute(
        store.db,
      );
      return store;
    },
    close: async () => {
      if (!opened) return;
      const { store, drop } = await opened;
      await store.close();
      await drop();
    },
  };
}
