// The search index's write thread (write-thread.ts starts it): its own connection to the index
// file, recording the syncs' results it is sent, one batch a message, in the order sent.
import { parentPort, workerData } from 'node:worker_threads';
import { isEntityGitError } from '@entity-git/git';
import Database from 'better-sqlite3';
import { CarriedWrites } from './carried-writes.js';
import { TextPacker, ensureSchema, preparedOnce } from './index-schema.js';
import type { ThreadAnswer, ThreadData, ThreadRequest } from './write-thread.js';

const { root, file, closed } = workerData as ThreadData;
const port = parentPort!;
const signal = new Int32Array(closed);
/** Raised once the connection is closed (or never opened): the index's `close` waits for it. */
function raiseClosed(): void {
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
}

const db = new Database(file);
let writes: CarriedWrites;
try {
  db.pragma('busy_timeout = 10000');
  ensureSchema(db);
  const packer = new TextPacker(db);
  const sql = preparedOnce(db);
  writes = new CarriedWrites({ root, db, sql, packer });
} catch (err) {
  db.close();
  raiseClosed();
  throw err;
}

port.on('message', (request: ThreadRequest) => {
  if (request.kind === 'close') {
    db.close();
    port.close();
    // The caller waits for this, blocked (its `close` returns nothing to await).
    raiseClosed();
    return;
  }
  const answer: ThreadAnswer = {
    id: request.id,
    outcomes: writes
      .record(request.results)
      .map((c) =>
        isEntityGitError(c) ? { error: { code: c.code, message: c.message, data: c.data } } : { update: c },
      ),
  };
  port.postMessage(answer);
});
