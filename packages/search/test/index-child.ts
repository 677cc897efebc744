// Run by crash.test.ts as a process of its own: syncs each session of a SQLite DAG and updates
// the search index after each sync, as `entity-git sync` does, printing where it is, until killed.
import { openSqlite } from '@entity-git/sqlite';
import { createNodeMirror } from '@entity-git/node-fs';
import { SearchIndex } from '../src/index.js';

const [db, root] = process.argv.slice(2) as [string, string];
const store = await openSqlite({ file: db });
const mirror = createNodeMirror({ dag: store.dag, root });
const index = new SearchIndex({ root });
for (const sessionId of await store.dag.listSessions()) {
  await mirror.sync(sessionId);
  process.stdout.write(`synced ${sessionId}\n`);
  await index.update(sessionId);
  process.stdout.write(`indexed ${sessionId}\n`);
}
index.close();
await store.close();
