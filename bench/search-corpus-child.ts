// One of the search corpus's builders (bench/lib/search-corpus.ts), a process of its own: the
// sessions whose index is `part` modulo `parts`, in order, each written from the corpus's SQLite
// DAG by `mirror.sync` on a new Node mirror — what `entity-git sync` runs for a session without a
// repository (less reconcile's check before and after) — so the repositories are the ones a single
// process would write: the commit ids are a function of the DAG. It stops between two sessions at
// `deadline` (ms since the epoch) and prints the first session it did not write. A session whose
// repository is already whole (a build started again) costs a sync that writes nothing.
import { createNodeMirror } from '../packages/node-fs/src/index.js';
import { openSqlite } from '../packages/sqlite/src/index.js';
import { corpusSessionId } from './lib/search-corpus.js';

const [db, root, sessions, part, parts, deadline] = process.argv.slice(2).map((a, k) => (k < 2 ? a : Number(a))) as [
  string,
  string,
  number,
  number,
  number,
  number,
];
const store = await openSqlite({ file: db });
const mirror = createNodeMirror({ dag: store.dag, root });
let i = part;
for (; i < sessions && Date.now() < deadline; i += parts) await mirror.sync(corpusSessionId(i));
await store.close();
process.stdout.write(`${JSON.stringify({ part, next: i })}\n`);
