// The server from the command line:
//   npx tsx --conditions=source examples/ws-server/src/main.ts --db .demo/ws.db --root .demo/ws-sessions --demo
// prints the URL to open (the token rides in the fragment, which the browser never sends).
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { seedDemo } from './demo-data.js';
import { createServer, DEFAULT_HOST, DEFAULT_PORT } from './server.js';
import { echoAgent } from './agent.js';
import { userToken } from './token-source.js';
import { openSqlite } from '@entity-git/sqlite';

const HELP = `usage: main.ts --db <sqlite file> --root <sessions dir> [options]

  --db <file>        the SQLite DAG (created when missing)
  --root <dir>       where the session repositories live
  --port <n>         default ${DEFAULT_PORT} (0: any free port)
  --host <addr>      default ${DEFAULT_HOST}
  --token-file <f>   read the token from a file of mode 0600 (or set ENTITY_GIT_TOKEN);
                     at least 128 bits; default: a random one, printed
  --origin <origin>  allow a browser Origin (repeatable; default: this server's own)
  --workdir-root <d> projects may only be made in this directory (repeatable)
  --static <dir>     the built web app (default: examples/browser-replay/dist/app when it exists)
  --demo             write two demo sessions when the DAG lacks them
  --echo             answer sent messages with an echo agent (no model is connected); in a session
                     bound to a project it notes each message in agent-notes.md, and the turn is
                     auto-committed in the project's repository (skipped, with a warning, when the
                     user has uncommitted changes there)
`;

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    root: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    'token-file': { type: 'string' },
    origin: { type: 'string', multiple: true },
    'workdir-root': { type: 'string', multiple: true },
    static: { type: 'string' },
    demo: { type: 'boolean' },
    echo: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help || !values.db || !values.root) {
  process.stdout.write(HELP);
  process.exit(values.help ? 0 : 2);
}

const dbFile = resolve(values.db);
mkdirSync(dirname(dbFile), { recursive: true, mode: 0o700 });
const store = await openSqlite({ file: dbFile });
if (values.demo) {
  const written = await seedDemo(store);
  if (written.length > 0) console.log(`demo sessions written: ${written.join(', ')}`);
}
const appDir = join(import.meta.dirname, '../../browser-replay/dist/app');
const server = await createServer({
  db: store,
  root: resolve(values.root),
  port: values.port === undefined ? DEFAULT_PORT : Number(values.port),
  host: values.host ?? DEFAULT_HOST,
  token: await userToken(values['token-file']),
  origins: values.origin,
  ...(values['workdir-root'] === undefined ? {} : { workdirRoots: values['workdir-root'].map((d) => resolve(d)) }),
  staticDir: values.static === undefined ? appDir : resolve(values.static),
  agent: values.echo ? echoAgent : null,
  log: (line) => console.log(`[ws-server] ${line}`),
});
const r = server.reconciled;
if (r)
  console.log(
    `reconcile: ${r.entries.length} session(s), ${r.entries.filter((e) => e.action !== 'unchanged').length} backfilled or repaired`,
  );
console.log(`open ${server.url}/#token=${server.token}`);
console.log(`WebSocket: ${server.wsUrl}?token=${server.token}   origins allowed: ${server.origins.join(', ')}`);

const stop = async () => {
  await server.close();
  await store.close();
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
