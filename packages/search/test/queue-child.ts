// Run by queue-crash.test.ts as a process of its own: syncs each session of a SQLite DAG and queues
// the index update of each (a lag of ten minutes, so none is applied), says so, and waits to be killed.
import { openSqlite } from '@entity-git/sqlite';
import { createNodeMirror } from '@entity-git/node-fs';
import { SearchIndex } from '../src/index.js';

const [db, root] = process.argv.slice(2) as [string, string];
const store = await openSqlite({ file: db });
const mirror = createNodeMirror({ dag: store.dag, root });
const index = new SearchIndex({ root, batchMs: 600_000 });
for (const sessionId of await store.dag.listSessions()) index.enqueue(await mirror.sync(sessionId));
process.stdout.write('all queued\n');
setInterval(() => undefined, 1000);
