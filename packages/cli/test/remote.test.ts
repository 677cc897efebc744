import { createNodeMirror } from '@entity-git/node-fs';
import { openSqlite } from '@entity-git/sqlite';
import { GOLDEN_SESSION } from '@entity-git/test-utils';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer, type GitHttpServer } from '../../remote/test/git-http-server.js';
import { buildDb, git, json, revParseAll, run, tempDir } from './fixture.js';

const TOKEN = 'cli-secret';
let server: GitHttpServer;
beforeAll(async () => {
  server = await startGitHttpServer({ token: TOKEN, autoCreate: true });
});
afterAll(async () => {
  await server.close();
});

describe('entity-git push, restore and clone', () => {
  it('push every session, then restore (or clone) a fresh root from the host alone: same refs, verify clean', async () => {
    const dir = tempDir();
    const db = join(dir, 'dag.db');
    const root = join(dir, 'sessions');
    await buildDb(db);
    expect((await run(['--db', db, '--root', root, 'sync'])).code).toBe(0);
    const env = { ENTITY_GIT_REMOTE_TOKEN: TOKEN };
    const denied = await run([
      '--db',
      db,
      '--root',
      root,
      'push',
      '--remote',
      server.template,
      '--session',
      GOLDEN_SESSION.id,
    ]);
    expect(denied.code).toBe(1);
    expect(denied.stdout).toContain('failed (REMOTE_AUTH)');
    const pushed = await run(['--db', db, '--root', root, 'push', '--remote', server.template, '--json'], { env });
    expect(json(pushed)).toMatchObject({ ok: true });
    const fresh = join(dir, 'fresh');
    const restored = await run(['--db', db, '--root', fresh, 'restore', '--remote', server.template, '--json'], {
      env,
    });
    expect(restored.code).toBe(0);
    expect(json(restored).counts).toMatchObject({ restored: 3, failed: 0 });
    for (const s of json<{ sessions: { sessionId: string }[] }>(restored).sessions) {
      const a = revParseAll(join(root, s.sessionId));
      expect(revParseAll(join(fresh, s.sessionId))).toEqual(a);
      expect(git(join(fresh, s.sessionId), 'fsck', '--strict')).toBe('');
    }
    expect((await run(['--db', db, '--root', fresh, 'verify'])).code).toBe(0);
    const store = await openSqlite({ file: db });
    const mirror = createNodeMirror({ dag: store.dag, root: fresh });
    expect(await mirror.sync(GOLDEN_SESSION.id)).toMatchObject({ noop: true, commitsWritten: 0, branchesMoved: [] });
    await store.close();
    // `clone` is `restore` under the name a git user types: the same report, the same refs.
    const cloned = join(dir, 'cloned');
    const viaClone = await run(['--db', db, '--root', cloned, 'clone', '--remote', server.template, '--json'], { env });
    expect(viaClone.code).toBe(0);
    type Report = { ok: boolean; counts: Record<string, number>; sessions: { sessionId: string }[] };
    // Sessions are listed as they finish (four at a time): compared in id order.
    const sorted = (r: Report) => ({
      ...r,
      sessions: [...r.sessions].sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1)),
    });
    expect(sorted(json<Report>(viaClone))).toEqual(sorted(json<Report>(restored)));
    for (const s of json<Report>(viaClone).sessions) {
      expect(revParseAll(join(cloned, s.sessionId))).toEqual(revParseAll(join(root, s.sessionId)));
    }
    expect((await run(['--db', db, '--root', cloned, 'verify'])).code).toBe(0);
    expect(await run(['--db', db, '--root', fresh, 'restore'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--remote URL is required'),
    });
    expect(await run(['--db', db, '--root', fresh, 'clone'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--remote URL is required'),
    });
    expect(await run(['--db', db, '--root', fresh, 'restore', '--remote', 'http://127.0.0.1:1/x.git'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('{session}'),
    });
  });
});
