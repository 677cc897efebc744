// The HTTP side of the server over a real socket: the WebSocket upgrade and its refusals (token,
// origin, path, frame size), /healthz, the app's static files, traversal.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createServer, DEMO_SESSION, NOTES_SESSION } from '../src/index.js';
import { code, dir, server, store, TOKEN, wsUrl, useServer } from './server-helpers.js';
import { connect, open } from './ws-client.js';

useServer();

describe('the upgrade', () => {
  it('is bound to 127.0.0.1 and backfilled every session before listening', () => {
    expect(server.host).toBe('127.0.0.1');
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.reconciled?.entries.map((e) => [e.sessionId, e.action])).toEqual([
      [DEMO_SESSION, 'backfilled'],
      [NOTES_SESSION, 'backfilled'],
    ]);
    expect(server.origins).toEqual([`http://127.0.0.1:${server.port}`, `http://localhost:${server.port}`]);
  });

  it('refuses a missing or wrong token with 401', async () => {
    expect(await open(server.wsUrl, { origin: server.url })).toEqual({ ok: false, status: 401 });
    expect(await open(`${server.wsUrl}?token=nope`, { origin: server.url })).toEqual({ ok: false, status: 401 });
    expect(await open(`${server.wsUrl}?token=${TOKEN}x`)).toEqual({ ok: false, status: 401 });
    expect(await open(`${server.wsUrl}?token=${TOKEN.slice(0, -1)}`)).toEqual({ ok: false, status: 401 });
  });

  it('refuses an Origin not on the list with 403, even with the right token', async () => {
    expect(await open(wsUrl, { origin: 'http://evil.example' })).toEqual({ ok: false, status: 403 });
    expect(await open(wsUrl, { origin: `http://127.0.0.1:${server.port + 1}` })).toEqual({ ok: false, status: 403 });
    expect(await open(wsUrl, { origin: 'null' })).toEqual({ ok: false, status: 403 });
  });

  it('accepts the allowed origins, and a client that sends no Origin (not a browser) with the token', async () => {
    for (const origin of [`http://localhost:${server.port}`, undefined]) {
      const c = await connect(wsUrl, origin === undefined ? {} : { origin });
      expect(await code(c, 'server_info')).toBe('ok');
      await c.close();
    }
  });

  it('refuses another path with 404', async () => {
    expect(await open(`ws://127.0.0.1:${server.port}/other?token=${TOKEN}`)).toEqual({ ok: false, status: 404 });
  });

  it('takes an explicit origin list instead of the default', async () => {
    const other = await createServer({
      db: store,
      root: join(dir, 'sessions'),
      port: 0,
      token: TOKEN,
      origins: ['http://app.localhost:5173'],
      reconcile: false,
    });
    try {
      const url = `${other.wsUrl}?token=${TOKEN}`;
      expect(await open(url, { origin: other.url })).toEqual({ ok: false, status: 403 });
      const c = await connect(url, { origin: 'http://app.localhost:5173' });
      await c.close();
    } finally {
      await other.close();
    }
  });

  it('closes the socket with 1009 on a frame over maxPayload', async () => {
    const c = await connect(wsUrl);
    void c
      .raw(JSON.stringify({ action: 'server_info', params: { pad: 'x'.repeat(1024 * 1024) } }))
      .catch(() => undefined);
    expect((await c.closed).code).toBe(1009);
  });
});

describe('HTTP', () => {
  it('answers /healthz, serves the app, refuses traversal and other methods', async () => {
    const health = await fetch(`${server.url}/healthz`);
    expect(await health.json()).toEqual({ ok: true, name: 'entity-git ws-server' });
    const page = await fetch(`${server.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await page.text()).toContain('<title>app</title>');
    for (const path of ['/../secret.txt', '/%2e%2e/secret.txt', '/..%2fsecret.txt', '/missing.js', '/%00']) {
      expect([400, 404]).toContain((await fetch(`${server.url}${path}`)).status);
    }
    expect((await fetch(`${server.url}/`, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${server.url}/ws`)).status).toBe(426);
  });
});
