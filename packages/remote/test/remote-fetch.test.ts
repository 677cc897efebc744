// Restoring and fetching sessions from a smart-HTTP host: a fresh machine, a repository behind, a fetch
// racing the mirror's sync, diverged histories (kept, or forced), sessions the host lacks.
import { isEntityGitError, META_REF, type EntityGitError } from '@entity-git/core';
import { fetchSession, HEAD_RECORD_REF, pushSession, restoreSessions } from '@entity-git/remote';
import { createNodeMirror } from '@entity-git/node-fs';
import { GOLDEN_SESSION } from '@entity-git/test-utils';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../../node-fs/test/helpers.js';
import {
  addTurn,
  failure,
  GOLDEN_TIPS,
  goldenMachine,
  localTips,
  lsRemote,
  remoteOf,
  server,
  SID,
  storage,
  useGitHttpServer,
} from './remote-helpers.js';

useGitHttpServer();

describe('push and fetch over smart HTTP (native git http-backend on 127.0.0.1)', () => {
  it('restores a fresh machine from the remote alone: same refs, clean repository, the mirror finds nothing to do', async () => {
    const a = await goldenMachine();
    server.createRepo(`sessions/${SID}.git`);
    await pushSession({ remote: remoteOf(), storage, root: a.root, sessionId: SID });

    const progress: string[] = [];
    const root = tempDir();
    const report = await restoreSessions({
      remote: remoteOf(),
      storage,
      root,
      sessions: [SID],
      onProgress: (e) => progress.push(`${e.sessionId}:${e.action}`),
    });
    expect(report.counts).toMatchObject({ restored: 1, failed: 0, missing: 0 });
    expect(progress).toEqual([`${SID}:restored`]);
    const entry = report.entries[0]!;
    expect(entry.result).toMatchObject({
      repositoryCreated: true,
      downloaded: true,
      head: 'fork-u4',
      remoteHead: 'fork-u4',
      worktreeChanged: true,
    });
    expect(entry.result!.created.sort()).toEqual(Object.keys(GOLDEN_TIPS).sort());

    const dir = join(root, SID);
    const tips = localTips(dir);
    expect(tips).toEqual(GOLDEN_TIPS);
    expect(git(dir, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/fork-u4');
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(git(dir, 'ls-files').trim().split('\n')).toEqual(git(a.dir, 'ls-files').trim().split('\n'));
    expect(readFileSync(join(dir, 'meta.json'), 'utf8')).toBe(readFileSync(join(a.dir, 'meta.json'), 'utf8'));
    // The reflog says where the branches came from.
    expect(git(dir, 'reflog', 'show', '--format=%gs', 'main').trim()).toBe(
      `fetch: storing head from ${server.origin}/sessions/${SID}.git`,
    );

    const mirror = createNodeMirror({ dag: a.dag, root });
    expect(await mirror.verify(SID)).toMatchObject({ ok: true, differences: [] });
    const first = await mirror.sync(SID);
    expect(first).toMatchObject({ commitsWritten: 0, branchesMoved: [], head: 'fork-u4' });
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect((await mirror.sync(SID)).noop).toBe(true);
    expect(localTips(dir)).toEqual(tips);
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
  });

  it('fetches into an existing repository that is behind: fast-forwards, HEAD and working tree follow', async () => {
    const sid = 'behind-1';
    const a = await goldenMachine(sid);
    server.createRepo(`sessions/${sid}.git`);
    await pushSession({ remote: remoteOf(), storage, root: a.root, sessionId: sid });
    const root = tempDir();
    await restoreSessions({ remote: remoteOf(), storage, root, sessions: [sid] });
    const dir = join(root, sid);

    // Machine A goes on: two turns on a new fork, HEAD moves there.
    const leaf = await addTurn(a.dag, sid, 1, 'a2');
    await a.dag.setHead(sid, leaf);
    await a.dag.fillNode(sid, 'a6', 'Fixed.', null);
    await a.mirror.sync(sid);
    await pushSession({ remote: remoteOf(), storage, root: a.root, sessionId: sid });
    const aTips = localTips(a.dir);

    const result = await fetchSession({ remote: remoteOf(), storage, root, sessionId: sid });
    expect(result).toMatchObject({
      downloaded: true,
      repositoryCreated: false,
      ahead: [],
      diverged: [],
      localOnly: [],
      headMoved: true,
      head: 'fork-x-u1',
      worktreeChanged: true,
    });
    expect(result.created).toEqual(['fork-x-u1']);
    expect(result.fastForwarded).toEqual(['main']);
    expect(result.upToDate.sort()).toEqual(['fork-u2e', 'fork-u4', 'retry-a4r']);
    expect(localTips(dir)).toEqual(aTips);
    expect(git(dir, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/fork-x-u1');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'reflog', 'show', '--format=%gs', '-1', 'main').trim()).toBe(
      `fetch: fast-forward from ${server.origin}/sessions/${sid}.git`,
    );
    // Machine B's mirror, on the same DAG, has nothing to write.
    const mirror = createNodeMirror({ dag: a.dag, root });
    expect((await mirror.verify(sid)).ok).toBe(true);
    expect(await mirror.sync(sid)).toMatchObject({ commitsWritten: 0, branchesMoved: [] });
    expect((await mirror.sync(sid)).noop).toBe(true);

    // Nothing new: a fetch downloads nothing and changes nothing.
    const again = await fetchSession({ remote: remoteOf(), storage, root, sessionId: sid });
    expect(again).toMatchObject({
      downloaded: false,
      headMoved: false,
      worktreeChanged: false,
      created: [],
      fastForwarded: [],
    });
  });

  it("fetch and the mirror's sync at once share the session lock; a repository ahead keeps its branches and HEAD", async () => {
    const sid = 'race-1';
    const a = await goldenMachine(sid);
    server.createRepo(`sessions/${sid}.git`);
    await pushSession({ remote: remoteOf(), storage, root: a.root, sessionId: sid });
    const root = tempDir();
    await restoreSessions({ remote: remoteOf(), storage, root, sessions: [sid] });
    const dir = join(root, sid);
    const leaf = await addTurn(a.dag, sid, 1, 'a7');
    await a.dag.setHead(sid, leaf);
    await a.mirror.sync(sid);
    await pushSession({ remote: remoteOf(), storage, root: a.root, sessionId: sid });

    const b = createNodeMirror({ dag: a.dag, root });
    const [fetched, synced] = await Promise.all([
      fetchSession({ remote: remoteOf(), storage, root, sessionId: sid }),
      b.sync(sid),
    ]);
    // Whichever ran first, the other found the branch already there.
    expect([...fetched.fastForwarded, ...fetched.upToDate].sort()).toEqual([
      'fork-u2e',
      'fork-u4',
      'main',
      'retry-a4r',
    ]);
    expect(synced.commitsWritten).toBeLessThanOrEqual(1);
    expect(localTips(dir)).toEqual(localTips(a.dir));
    expect((await b.verify(sid)).ok).toBe(true);
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    await b.sync(sid);
    expect((await b.sync(sid)).noop).toBe(true);

    // B goes on alone: its branch is ahead of the host's, and a fetch leaves it (and HEAD) be.
    await addTurn(a.dag, sid, 2, leaf);
    await b.sync(sid);
    const ahead = await fetchSession({ remote: remoteOf(), storage, root, sessionId: sid });
    expect(ahead).toMatchObject({
      ahead: ['fork-u4'],
      fastForwarded: [],
      diverged: [],
      headMoved: false,
      head: 'fork-u4',
      downloaded: false,
    });
    expect(git(dir, 'status', '--porcelain')).toBe('');
    const pushed = await pushSession({ remote: remoteOf(), storage, root, sessionId: sid });
    expect(pushed.pushed.map((p) => p.ref)).toEqual(['refs/heads/fork-u4']);
  });

  it("two machines pushing diverged versions of a session: the second push is rejected, fetch reports it, force takes the host's", async () => {
    const sid = 'diverge-1';
    const a = await goldenMachine(sid);
    const b = await goldenMachine(sid);
    server.createRepo(`sessions/${sid}.git`);
    await addTurn(a.dag, sid, 1, 'a7');
    await a.mirror.sync(sid);
    await pushSession({ remote: remoteOf(), storage, root: a.root, sessionId: sid });
    // B's DAG got a different turn on the same branch (e.g. a stale or separate DAG).
    await b.dag.appendNode({
      id: 'y-u1',
      session_id: sid,
      role: 'user',
      content: 'something else',
      predecessor: 'a7',
      created_at: GOLDEN_SESSION.created_at + 2000,
    });
    await b.dag.appendNode({
      id: 'y-a1',
      session_id: sid,
      role: 'assistant',
      content: 'ok',
      predecessor: 'y-u1',
      created_at: GOLDEN_SESSION.created_at + 2001,
    });
    await b.mirror.sync(sid);

    const err = await failure(pushSession({ remote: remoteOf(), storage, root: b.root, sessionId: sid }));
    expect(isEntityGitError(err, 'REMOTE_REJECTED')).toBe(true);
    const result = (err as EntityGitError).data.result as { rejected: Array<{ ref: string }>; upToDate: string[] };
    expect(result.rejected.map((r) => r.ref)).toEqual(['refs/heads/fork-u4']);
    expect(result.upToDate.sort()).toEqual([
      HEAD_RECORD_REF,
      META_REF,
      'refs/heads/fork-u2e',
      'refs/heads/main',
      'refs/heads/retry-a4r',
    ]);
    expect((await lsRemote(sid))['refs/heads/fork-u4']).toBe(git(a.dir, 'rev-parse', 'fork-u4').trim());

    const bTip = git(b.dir, 'rev-parse', 'fork-u4').trim();
    const kept = await fetchSession({ remote: remoteOf(), storage, root: b.root, sessionId: sid });
    expect(kept).toMatchObject({ diverged: ['fork-u4'], forced: [], headMoved: false, head: 'fork-u4' });
    expect(git(b.dir, 'rev-parse', 'fork-u4').trim()).toBe(bTip);
    expect(git(b.dir, 'rev-parse', 'origin/fork-u4').trim()).toBe(git(a.dir, 'rev-parse', 'fork-u4').trim());

    const forced = await fetchSession({ remote: remoteOf(), storage, root: b.root, sessionId: sid, force: true });
    expect(forced.forced).toEqual(['fork-u4']);
    expect(git(b.dir, 'rev-parse', 'fork-u4').trim()).toBe(git(a.dir, 'rev-parse', 'fork-u4').trim());
    expect(git(b.dir, 'reflog', 'show', '--format=%H', 'fork-u4')).toContain(bTip); // the old tip stays findable
    expect(git(b.dir, 'status', '--porcelain')).toBe('');
  });

  it('restore reports sessions the host lacks or holds empty, and goes on', async () => {
    server.createRepo('sessions/empty-1.git');
    const report = await restoreSessions({
      remote: remoteOf(),
      storage,
      root: tempDir(),
      sessions: (async function* () {
        yield 'nowhere-1';
        yield 'empty-1';
      })(),
    });
    const actions = Object.fromEntries(report.entries.map((e) => [e.sessionId, e.action]));
    expect(actions).toEqual({ 'nowhere-1': 'missing', 'empty-1': 'empty' });
    expect(report.entries.find((e) => e.sessionId === 'nowhere-1')!.error!.code).toBe('REMOTE_NOT_FOUND');
  });
});
