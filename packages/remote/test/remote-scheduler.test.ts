// The push scheduler: retries while the host is down, pushes in the background behind the mirror service,
// fails a permanent error at once.
import { createMirrorService, MemoryDag } from '@entity-git/core';
import { createPushScheduler, type PushSchedulerEvents } from '@entity-git/remote';
import { createNodeMirror } from '@entity-git/node-fs';
import { GOLDEN_SESSION } from '@entity-git/test-utils';
import http from 'isomorphic-git/http/node';
import { describe, expect, it } from 'vitest';
import { startGitHttpServer, type GitHttpServer } from './git-http-server.js';
import { git, tempDir } from '../../node-fs/test/helpers.js';
import { goldenMachine, lsRemote, remoteOf, server, storage, useGitHttpServer } from './remote-helpers.js';

useGitHttpServer();

describe('the push scheduler', () => {
  it('retries while the host is down and pushes once it is back', async () => {
    const { root } = await goldenMachine('retry-1');
    const hostRoot = tempDir();
    const first = await startGitHttpServer({ root: hostRoot });
    const port = first.port;
    first.createRepo('sessions/retry-1.git');
    await first.close();
    const events: string[] = [];
    const scheduler = createPushScheduler({
      remote: { url: first.template, http },
      storage,
      root,
      delayMs: 10,
      baseDelayMs: 40,
      maxDelayMs: 200,
      attempts: 30,
    });
    let back: GitHttpServer | null = null;
    const pushed = new Promise<PushSchedulerEvents['pushed']>((resolve) => scheduler.on('pushed', resolve));
    scheduler.on('retrying', (e) => {
      events.push(`retrying:${e.error.code}:${e.attempt}`);
      if (e.attempt === 3 && back === null) {
        void startGitHttpServer({ root: hostRoot, port }).then((s) => (back = s));
      }
    });
    scheduler.on('failed', (e) => events.push(`failed:${e.error.code}`));
    scheduler.schedule('retry-1');
    scheduler.schedule('retry-1');
    const done = await pushed;
    await scheduler.drain();
    expect(events.slice(0, 3)).toEqual([
      'retrying:REMOTE_ERROR:1',
      'retrying:REMOTE_ERROR:2',
      'retrying:REMOTE_ERROR:3',
    ]);
    expect(events.every((e) => e.startsWith('retrying:REMOTE_ERROR'))).toBe(true);
    expect(done.result.pushed).toHaveLength(6); // four branches, the HEAD record, the meta ref
    expect(scheduler.status()).toEqual([]);
    await (back as GitHttpServer | null)?.close();
  });

  it("plugged into the mirror service: pushes in the background, coalesced, never in the turn's way", async () => {
    const dag = new MemoryDag();
    const root = tempDir();
    const mirror = createNodeMirror({ dag, root });
    const sessions = ['svc-1', 'svc-2', 'svc-3'];
    for (const sid of sessions) server.createRepo(`sessions/${sid}.git`);
    const scheduler = createPushScheduler({ remote: remoteOf(), storage, root, delayMs: 50, baseDelayMs: 20 });
    const service = createMirrorService({ mirror, afterSync: scheduler.afterSync });
    const pushes: string[] = [];
    const failures: unknown[] = [];
    scheduler.on('pushed', (e) => pushes.push(e.sessionId));
    scheduler.on('failed', (e) => failures.push(e));
    for (const sid of sessions) {
      await dag.createSession({ id: sid, created_at: GOLDEN_SESSION.created_at });
      let prev: string | null = null;
      for (let t = 1; t <= 5; t++) {
        const u = await dag.appendNode({
          id: `${sid}-u${t}`,
          session_id: sid,
          role: 'user',
          content: `turn ${t}`,
          predecessor: prev,
          created_at: GOLDEN_SESSION.created_at + t * 10,
        });
        const a = await dag.appendNode({
          id: `${sid}-a${t}`,
          session_id: sid,
          role: 'assistant',
          content: `reply ${t}`,
          predecessor: u.id,
          created_at: GOLDEN_SESSION.created_at + t * 10 + 1,
        });
        prev = a.id;
        service.notify(sid);
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    // The hook resolves with the push still to come: a push never holds up the sync queue.
    await scheduler.afterSync('svc-1', {
      sessionId: 'svc-1',
      commitsWritten: 1,
      branchesMoved: ['main'],
      head: 'main',
      nodesRead: 2,
      objectsWritten: 7,
      bytesWritten: 1024,
      noop: false,
      derivation: 'extended',
    });
    expect(scheduler.status().map((s) => s.sessionId)).toContain('svc-1');
    await service.drain();
    await scheduler.flush();
    expect(failures).toEqual([]);
    // Coalesced: far fewer pushes than the 15 turns.
    expect(pushes.length).toBeGreaterThanOrEqual(3);
    expect(pushes.length).toBeLessThan(15);
    for (const sid of sessions) {
      const local = git(mirror.repoPath(sid), 'rev-parse', 'main').trim();
      expect((await lsRemote(sid))['refs/heads/main']).toBe(local);
      expect(git(mirror.repoPath(sid), 'log', '--format=%s', 'main').trim().split('\n')).toHaveLength(5);
    }
    await service.close();
    await scheduler.close();
    scheduler.schedule('svc-1');
    expect(scheduler.status()).toEqual([]); // closed: no more work
  });

  it('a permanent failure (bad token) is failed at once, not retried', async () => {
    const { root } = await goldenMachine('perm-1');
    server.createRepo('sessions/perm-1.git');
    const scheduler = createPushScheduler({
      remote: remoteOf({ onAuth: () => ({ username: 'x', password: 'bad' }) }),
      storage,
      root,
      delayMs: 0,
      baseDelayMs: 10,
    });
    const events: string[] = [];
    scheduler.on('retrying', () => events.push('retrying'));
    const failed = new Promise<PushSchedulerEvents['failed']>((resolve) => scheduler.on('failed', resolve));
    scheduler.schedule('perm-1');
    const e = await failed;
    expect(e).toMatchObject({ sessionId: 'perm-1', attempts: 1, error: { code: 'REMOTE_AUTH' } });
    expect(events).toEqual([]);
    await scheduler.close();
  });
});
