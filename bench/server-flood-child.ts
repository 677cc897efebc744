// The server of the server-flood bench, alone in its process so its peak RSS is its own: a SQLite
// DAG holding one 1,000-turn session, served by the ws-server with the limits given on the command
// line (`limited` or `unlimited`). Prints `{ port, token }` once it listens.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlite } from '../packages/sqlite/src/index.js';
import { createServer } from '../examples/ws-server/src/index.js';
import { seedLongSession } from '../examples/browser-replay/test/long-session.js';

const mode = process.argv[2];
const dir = mkdtempSync(join(tmpdir(), 'entity-git-bench-flood-'));
const store = await openSqlite({ file: join(dir, 'dag.db') });
await seedLongSession(store, 'long', 1000, { tools: 2 });
const token = randomBytes(24).toString('base64url');
const server = await createServer({
  db: store,
  root: join(dir, 'sessions'),
  port: 0,
  token,
  projectGit: null,
  ...(mode === 'unlimited' ? { maxInFlight: Number.MAX_SAFE_INTEGER, maxBuffered: Number.MAX_SAFE_INTEGER } : {}),
});
process.stdout.write(`${JSON.stringify({ port: server.port, token, dir })}\n`);
