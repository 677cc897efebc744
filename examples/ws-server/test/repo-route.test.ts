// `GET /repo/<session>` (the browser's "Save for offline" copy): refusals as typed JSON errors (a
// missing or wrong token, another origin, a hostile or missing session), and a good copy that,
// written out as a repository, has the server's branches at the server's commit ids.
import { createNodeMirror } from '@entity-git/node-fs';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_SESSION, decodeRepoBundle, NOTES_SESSION, REPO_BUNDLE_TYPE } from '../src/index.js';
import { client, dir, server, store, TOKEN, useServer } from './server-helpers.js';

useServer();

const auth = { Authorization: `Bearer ${TOKEN}` };
const get = (path: string, headers: Record<string, string> = auth) => fetch(`${server.url}${path}`, { headers });

/** A request with its path sent as written (fetch would resolve `..`). */
function raw(path: string, headers: Record<string, string> = auth): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: server.host, port: server.port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const error = async (r: Response) => [r.status, ((await r.json()) as { error: { code: string } }).error.code];

describe('GET /repo/<session>', () => {
  it('refuses a missing or wrong token (401), another origin (403), other methods (405)', async () => {
    expect(await error(await get(`/repo/${DEMO_SESSION}`, {}))).toEqual([401, 'UNAUTHORIZED']);
    expect(await error(await get(`/repo/${DEMO_SESSION}`, { Authorization: 'Bearer nope-nope-nope' }))).toEqual([
      401,
      'UNAUTHORIZED',
    ]);
    expect(await error(await get(`/repo/${DEMO_SESSION}`, { Authorization: TOKEN }))).toEqual([401, 'UNAUTHORIZED']);
    expect(await error(await get(`/repo/${DEMO_SESSION}`, { ...auth, Origin: 'http://evil.example' }))).toEqual([
      403,
      'FORBIDDEN',
    ]);
    const post = await fetch(`${server.url}/repo/${DEMO_SESSION}`, { method: 'POST', headers: auth });
    expect(await error(post)).toEqual([405, 'METHOD_NOT_ALLOWED']);
  });

  it('refuses a hostile session id (400 INVALID_ID, or 404: no such session) and a missing one (404)', async () => {
    expect(await raw('/repo/../x')).toMatchObject({ status: 400, body: { ok: false, error: { code: 'INVALID_ID' } } });
    expect(await raw('/repo/')).toMatchObject({ status: 400, body: { error: { code: 'INVALID_ID' } } });
    expect(await raw('/repo/%E0%A4%A')).toMatchObject({ status: 400, body: { error: { code: 'INVALID_ID' } } });
    for (const id of ['..%2Fx', '..%2F..%2Fdag.db', '%2E%2E', '..'])
      expect(await raw(`/repo/${id}`)).toMatchObject({ status: 404, body: { error: { code: 'SESSION_NOT_FOUND' } } });
    expect(await error(await get('/repo/no-such-session'))).toEqual([404, 'SESSION_NOT_FOUND']);
  });

  it("gives a copy whose branches, written out as a repository, are the server's exact tips", async () => {
    // A live turn first: its commit is loose, beside the backfill's pack.
    expect((await client.request('send_message', { session_id: NOTES_SESSION, content: 'one more' })).ok).toBe(true);
    for (const id of [DEMO_SESSION, NOTES_SESSION]) {
      const r = await get(`/repo/${encodeURIComponent(id)}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe(REPO_BUNDLE_TYPE);
      const files = decodeRepoBundle(new Uint8Array(await r.arrayBuffer()));
      const paths = files.map((f) => f.path);
      expect(paths).toContain('HEAD');
      expect(paths.some((p) => p.startsWith('objects/pack/') && p.endsWith('.pack'))).toBe(true);
      expect(paths.filter((p) => p === 'index' || p.startsWith('logs/') || p.endsWith('.lock'))).toEqual([]);
      // Refs come before the objects they name.
      expect(paths.findIndex((p) => p.startsWith('objects/'))).toBeGreaterThan(paths.indexOf('HEAD'));
      const root = mkdtempSync(join(tmpdir(), 'eg-copy-'));
      try {
        const gitdir = join(server.mirror.repoPath(id).replace(join(dir, 'sessions'), root), '.git');
        for (const f of files) {
          mkdirSync(dirname(join(gitdir, f.path)), { recursive: true });
          writeFileSync(join(gitdir, f.path), f.data);
        }
        const copy = createNodeMirror({ dag: store.dag, root });
        expect(await copy.branches(id)).toEqual(await server.mirror.branches(id));
        expect(await copy.log(id)).toEqual(await server.mirror.log(id));
        expect(execFileSync('git', ['--git-dir', gitdir, 'fsck', '--strict'], { encoding: 'utf8' })).toBe('');
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    }
  });
});
