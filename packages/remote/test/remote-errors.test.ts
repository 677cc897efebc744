// What the remote operations refuse or report: writes outside objects and remote-tracking refs, hostile
// session ids (escaped, never refused), bad credentials, a host that is down, a session without a repository.
import { isEntityGitError, MemoryDag, type EntityGitError } from '@entity-git/core';
import { defineRemote, fetchSession, pushSession, restoreSessions } from '@entity-git/remote';
import { createNodeMirror } from '@entity-git/node-fs';
import http from 'isomorphic-git/http/node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { storeFor } from '@entity-git/git';
import { transportFs } from '../src/transport-fs.js';
import { repoOf } from './remote-repo.js';
import { startGitHttpServer } from './git-http-server.js';
import { git, tempDir } from '../../node-fs/test/helpers.js';
import {
  failure,
  GOLDEN_TIPS,
  goldenMachine,
  headsOf,
  lsRemote,
  remoteOf,
  server,
  storage,
  useGitHttpServer,
} from './remote-helpers.js';

useGitHttpServer();

describe('push and fetch over smart HTTP (native git http-backend on 127.0.0.1)', () => {
  it('isomorphic-git gets a file system that refuses every write but objects and remote-tracking refs', async () => {
    const { root } = await goldenMachine('guard-1');
    const store = storeFor(storage);
    const repo = repoOf(store, root, 'guard-1');
    const fs = transportFs(store, repo).promises;
    const main = git(join(root, 'guard-1'), 'rev-parse', 'main').trim();
    for (const path of [
      'refs/heads/main',
      'HEAD',
      'index',
      'logs/HEAD',
      'config',
      'packed-refs',
      'refs/entity-git/HEAD',
      '../outside',
    ]) {
      await expect(fs.writeFile(`${repo.gitdir}/${path}`, 'x')).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
    }
    await expect(fs.unlink(`${repo.gitdir}/refs/heads/main`)).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
    await fs.writeFile(`${repo.gitdir}/refs/remotes/origin/x`, `${GOLDEN_TIPS.main}\n`);
    await fs.writeFile(`${repo.gitdir}/objects/pack/probe.tmp`, 'x');
    expect(readFileSync(`${repo.gitdir}/refs/remotes/origin/x`, 'utf8')).toBe(`${GOLDEN_TIPS.main}\n`);
    expect(git(join(root, 'guard-1'), 'rev-parse', 'main').trim()).toBe(main);
  });

  it('escapes a hostile session id into the URL and the directory alike', async () => {
    const sid = 'team/a b%.lock';
    const { root } = await goldenMachine(sid);
    const segment = 'team%2Fa%20b%25%2Elock';
    expect(join(root, segment)).toBe(createNodeMirror({ dag: new MemoryDag(), root }).repoPath(sid));
    server.createRepo(`sessions/${segment}.git`);
    expect(remoteOf().urlFor(sid)).toBe(`${server.origin}/sessions/${encodeURIComponent(segment)}.git`);
    await pushSession({ remote: remoteOf(), storage, root, sessionId: sid });
    expect(headsOf(await lsRemote(encodeURIComponent(segment)))).toHaveProperty('main');
    const fresh = tempDir();
    const report = await restoreSessions({ remote: remoteOf(), storage, root: fresh, sessions: [sid] });
    expect(report.counts.restored).toBe(1);
    expect(git(join(fresh, segment), 'status', '--porcelain')).toBe('');
  });

  it('a bad token or no credentials is REMOTE_AUTH, for push, fetch and restore', async () => {
    const { root } = await goldenMachine('auth-1');
    server.createRepo('sessions/auth-1.git');
    const wrong = remoteOf({ onAuth: () => ({ username: 'agent', password: 'wrong' }) });
    const none = remoteOf({ onAuth: undefined });
    for (const remote of [wrong, none]) {
      const e1 = await failure(pushSession({ remote, storage, root, sessionId: 'auth-1' }));
      expect(isEntityGitError(e1, 'REMOTE_AUTH')).toBe(true);
      expect((e1 as EntityGitError).data).toMatchObject({ statusCode: 401, retryable: false, op: 'push' });
      const e2 = await failure(fetchSession({ remote, storage, root, sessionId: 'auth-1' }));
      expect(isEntityGitError(e2, 'REMOTE_AUTH')).toBe(true);
    }
    const cancelled = remoteOf({ onAuth: () => ({ cancel: true }) });
    expect((await failure(pushSession({ remote: cancelled, storage, root, sessionId: 'auth-1' }))).code).toBe(
      'REMOTE_AUTH',
    );
    const report = await restoreSessions({ remote: wrong, storage, root: tempDir(), sessions: ['auth-1'] });
    expect(report.entries[0]).toMatchObject({ action: 'failed', error: { code: 'REMOTE_AUTH' } });
    expect(await lsRemote('auth-1')).toEqual({});
  });

  it('a host that is down is a retryable REMOTE_ERROR; a push of a session without a repository is SESSION_NOT_FOUND', async () => {
    const { root } = await goldenMachine('down-1');
    const gone = await startGitHttpServer();
    await gone.close();
    const remote = defineRemote({ url: gone.template, http });
    const err = await failure(pushSession({ remote, storage, root, sessionId: 'down-1' }));
    expect(err.code).toBe('REMOTE_ERROR');
    expect(err.data).toMatchObject({ retryable: true, networkCode: 'ECONNREFUSED' });
    expect((await failure(fetchSession({ remote, storage, root, sessionId: 'down-1' }))).code).toBe('REMOTE_ERROR');
    expect((await failure(pushSession({ remote: remoteOf(), storage, root, sessionId: 'no-repo' }))).code).toBe(
      'SESSION_NOT_FOUND',
    );
    expect(() => defineRemote({ url: 'https://host/all-sessions.git', http })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
  });
});
