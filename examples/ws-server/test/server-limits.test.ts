// The server's limits over real sockets: the Host allow-list, the token's strength and the delay
// after wrong ones, the in-flight limit per connection (`BUSY`), and a client that stops reading
// holding no more than its own bounded share of the server's memory.
import { openSqlite, type SqlStore } from '@entity-git/sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { serveConnection } from '../src/connection.js';
import { tokenBits } from '../src/gate.js';
import { createServer, DEMO_SESSION, NOTES_SESSION, seedDemo, type EntityGitServer } from '../src/index.js';
import { open } from './ws-client.js';

const TOKEN = 'limits-token-abcdefghijklmnopqrstuvwxyz';
let dir = '';
let store: SqlStore;
let server: EntityGitServer;
let release: () => void = () => undefined;
let blocked: Promise<void> = Promise.resolve();

/** Status of a GET with the given Host header, and the number of the upgrade's answer. */
const get = (port: number, path: string, host: string, headers: Record<string, string> = {}) =>
  new Promise<number>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { Host: host, ...headers } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'eg-limits-'));
  store = await openSqlite({ file: join(dir, 'dag.db') });
  await seedDemo(store);
  server = await createServer({
    db: store,
    root: join(dir, 'sessions'),
    port: 0,
    token: TOKEN,
    projectGit: null,
    maxInFlight: 2,
    failedAttemptDelayMs: 300,
    // Blocks until the test lets it go: two of these are two requests surely in flight.
    agent: async () => {
      await blocked;
      return 'ok';
    },
  });
});
afterAll(async () => {
  await server?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Host allow-list', () => {
  it('answers its own names and refuses any other Host (DNS rebinding) with 421, pages and upgrades alike', async () => {
    const p = server.port;
    expect(await get(p, '/healthz', `127.0.0.1:${p}`)).toBe(200);
    expect(await get(p, '/healthz', `LOCALHOST:${p}`)).toBe(200);
    expect(await get(p, '/healthz', `evil.example:${p}`)).toBe(421);
    expect(await get(p, '/', 'evil.example')).toBe(421);
    expect(await get(p, `/repo/${DEMO_SESSION}`, `evil.example:${p}`, { Authorization: `Bearer ${TOKEN}` })).toBe(421);
    const upgrade = {
      Connection: 'Upgrade',
      Upgrade: 'websocket',
      'Sec-WebSocket-Version': '13',
      'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
    };
    expect(await get(p, `/ws?token=${TOKEN}`, `evil.example:${p}`, upgrade)).toBe(421);
    expect(await get(p, `/ws?token=${TOKEN}`, `127.0.0.1:${p}`, upgrade)).toBe(101);
  });
});

describe('the token', () => {
  it('a user-given token must carry 128 bits', async () => {
    expect([tokenBits('0'.repeat(32)), tokenBits('z'.repeat(22)) >= 128, tokenBits('12345678')]).toEqual([
      128,
      true,
      32,
    ]);
    for (const token of ['12345678', 'f'.repeat(31), 'short-but-mixed!'])
      await expect(
        createServer({ db: store, root: join(dir, 's2'), port: 0, token, reconcile: false }),
      ).rejects.toThrow(/at least 128 bits/);
  });

  it('wrong tokens are checked one at a time, each after the delay the one before added; the right one still gets in', async () => {
    const wrong = Array.from({ length: 5 }, (_, i) => `${server.wsUrl}?token=wrong-${i}`);
    const started = Date.now();
    const statuses = await Promise.all(wrong.map((u) => open(u)));
    const took = Date.now() - started;
    expect(statuses).toEqual(wrong.map(() => ({ ok: false, status: 401 })));
    // The first is answered at once, the four behind it wait 300 ms each at least.
    expect(took).toBeGreaterThanOrEqual(4 * 300);
    const right = await open(`${server.wsUrl}?token=${TOKEN}`);
    expect(right.ok).toBe(true);
    if (right.ok) await right.client.close();
  });
});

describe('requests in flight', () => {
  it('past the limit a request is answered BUSY with its id; the ones running finish', async () => {
    blocked = new Promise((r) => {
      release = r;
    });
    const opened = await open(`${server.wsUrl}?token=${TOKEN}`);
    if (!opened.ok) throw new Error(`upgrade refused: ${opened.status}`);
    const c = opened.client;
    const first = c.request('send_message', { session_id: DEMO_SESSION, content: 'one' });
    const second = c.request('send_message', { session_id: NOTES_SESSION, content: 'two' });
    const third = await c.request('list_sessions', {});
    expect(third).toMatchObject({ ok: false, error: { code: 'BUSY' }, id: expect.any(String) });
    release();
    expect([(await first).ok, (await second).ok]).toEqual([true, true]);
    expect((await c.request('list_sessions', {})).ok).toBe(true);
    await c.close();
  });
});

describe('a client that stops reading', () => {
  it('holds at most maxInFlight handlers and about maxBuffered bytes of replies; every request is answered once it reads again', async () => {
    const reply = 'x'.repeat(8 * 1024 * 1024);
    let running = 0;
    let most = 0;
    let handled = 0;
    const wss = new WebSocketServer({ noServer: true });
    const sockets: WebSocket[] = [];
    const http = createHttpServer();
    http.on('upgrade', (req, socket, head) =>
      wss.handleUpgrade(req, socket, head, (ws) => {
        sockets.push(ws);
        serveConnection(ws, {
          maxInFlight: 4,
          maxBuffered: 1024 * 1024,
          handle: async (r) => {
            running++;
            most = Math.max(most, running);
            handled++;
            await new Promise((done) => setImmediate(done));
            running--;
            return { ok: true, result: reply, id: (r as { id: number }).id };
          },
        });
      }),
    );
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const ws = new WebSocket(`ws://127.0.0.1:${(http.address() as AddressInfo).port}`, { maxPayload: 0 });
    await new Promise((r) => ws.once('open', r));
    const answers: Array<{ ok: boolean; id: number }> = [];
    ws.on('message', (d) => answers.push(JSON.parse(String(d))));
    ws.pause();
    for (let i = 0; i < 4; i++) ws.send(JSON.stringify({ id: i, action: 'x' }));
    // 32 MiB of replies cannot all sit in the kernel's buffers: the server stops reading this client.
    const serverSide = () => sockets[0]!;
    for (let i = 0; i < 500 && !(sockets.length === 1 && serverSide().isPaused); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(serverSide().isPaused).toBe(true);
    for (let i = 4; i < 200; i++) ws.send(JSON.stringify({ id: i, action: 'x' }));
    await new Promise((r) => setTimeout(r, 300));
    expect([handled, most]).toEqual([4, 4]);
    expect(serverSide().bufferedAmount).toBeLessThanOrEqual(4 * (reply.length + 64));
    ws.resume();
    for (let i = 0; i < 3000 && answers.length < 200; i++) await new Promise((r) => setTimeout(r, 20));
    expect(answers.map((a) => a.id).sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(handled).toBeGreaterThan(4);
    expect(most).toBeLessThanOrEqual(4);
    ws.close();
    wss.close();
    await new Promise((r) => http.close(r));
  });
});
