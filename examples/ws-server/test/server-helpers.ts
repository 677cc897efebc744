// The server the ws-server tests talk to, one per test file: the demo sessions in SQLite, a token,
// the static app directory (with a file outside it, for traversal), the echo agent, and a client
// connected over a real WebSocket.
import { createNodeProjectGit, ShadowProjectGit } from '@entity-git/project/node';
import { openSqlite, type SqlStore } from '@entity-git/sqlite';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { createServer, echoAgent, seedDemo, type EntityGitServer } from '../src/index.js';
import { connect, type Client } from './ws-client.js';

export const TOKEN = 'test-token-0123456789abcdef-xyz';
export let dir = '';
export let store: SqlStore;
export let server: EntityGitServer;
export let client: Client;
export let wsUrl = '';

export const code = async (c: Client, action: string, params?: unknown) => {
  const r = await c.request(action, params);
  return r.ok ? 'ok' : r.error.code;
};

/** Starts the server before the test file's tests and stops it after them: called once, at the top of each file. */
export function useServer(): void {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'eg-ws-'));
    mkdirSync(join(dir, 'app'));
    writeFileSync(join(dir, 'app', 'index.html'), '<!doctype html><title>app</title>');
    writeFileSync(join(dir, 'secret.txt'), 'outside the app');
    store = await openSqlite({ file: join(dir, 'dag.db') });
    await seedDemo(store);
    server = await createServer({
      db: store,
      root: join(dir, 'sessions'),
      port: 0,
      token: TOKEN,
      staticDir: join(dir, 'app'),
      agent: echoAgent,
      // These files test the auto-commit (agent commits, the warning, undo): their projects are in
      // auto-commit mode; server-shadow.test.ts runs the server's default, shadow.
      projectGit: new ShadowProjectGit({
        root: join(dir, 'sessions', '.shadow'),
        defaultMode: 'auto-commit',
        autoCommit: createNodeProjectGit({ dir: join(dir, 'locks') }),
      }),
    });
    wsUrl = `${server.wsUrl}?token=${TOKEN}`;
    client = await connect(wsUrl, { origin: server.url });
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });
}
