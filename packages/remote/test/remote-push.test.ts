// Pushing sessions to a smart-HTTP host: every branch with the golden ids, the HEAD record and the meta ref;
// fast-forwards of the branches that moved; two roots over one DAG push the same refs; a remote per session.
import { MemoryDag, META_REF } from '@entity-git/core';
import { defineRemote, HEAD_RECORD_REF, pushSession } from '@entity-git/remote';
import { createNodeMirror } from '@entity-git/node-fs';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';
import http from 'isomorphic-git/http/node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../../node-fs/test/helpers.js';
import {
  addTurn,
  failure,
  GOLDEN_TIPS,
  goldenMachine,
  headsOf,
  localTips,
  lsRemote,
  remoteOf,
  server,
  SID,
  storage,
  TOKEN,
  useGitHttpServer,
} from './remote-helpers.js';

useGitHttpServer();

describe('push and fetch over smart HTTP (native git http-backend on 127.0.0.1)', () => {
  it('pushes every branch with the golden ids and the HEAD record; a second push sends nothing', async () => {
    const { root, dir } = await goldenMachine();
    server.createRepo(`sessions/${SID}.git`);
    const result = await pushSession({ remote: remoteOf(), storage, root, sessionId: SID });
    expect(result.pushed.map((p) => p.ref).sort()).toEqual(
      [...Object.keys(GOLDEN_TIPS).map((b) => `refs/heads/${b}`), HEAD_RECORD_REF, META_REF].sort(),
    );
    expect(result.pushed.every((p) => p.from === null)).toBe(true);
    expect(result.head).toBe('fork-u4');
    const refs = await lsRemote(SID);
    expect(headsOf(refs)).toEqual(GOLDEN_TIPS);
    expect(Object.keys(refs).sort()).toEqual(
      [
        ...Object.keys(GOLDEN_TIPS).map((b) => `refs/heads/${b}`),
        HEAD_RECORD_REF,
        `${HEAD_RECORD_REF}^{}`,
        META_REF,
      ].sort(),
    );
    expect(refs[`${HEAD_RECORD_REF}^{}`]).toBe('4b1cc3d267e0d1e614cf1f5670401133cff1ac7f'); // turn 1, shared by every branch
    const bare = join(server.root, 'sessions', `${SID}.git`);
    // The HEAD record: a tag on the branch's first commit, naming the branch.
    expect(git(bare, 'cat-file', '-t', HEAD_RECORD_REF).trim()).toBe('tag');
    expect(git(bare, 'cat-file', '-p', HEAD_RECORD_REF)).toBe(
      'object 4b1cc3d267e0d1e614cf1f5670401133cff1ac7f\ntype commit\ntag entity-git/HEAD\ntagger entity-git <entity-git@localhost> 1779500009 +0000\n\nref: refs/heads/fork-u4\n',
    );
    // The session row travels with the repository: plain git reads it on the host.
    expect(JSON.parse(git(bare, 'show', `${META_REF}:session.json`))).toEqual({ ...GOLDEN_SESSION, head: undefined });
    expect(refs[META_REF]).toBe(git(dir, 'rev-parse', META_REF).trim());
    expect(git(bare, 'fsck', '--strict', '--no-dangling')).toBe('');
    // Locally: the remote is configured, remote-tracking refs match, nothing else moved.
    expect(git(dir, 'config', 'remote.origin.url').trim()).toBe(`${server.origin}/sessions/${SID}.git`);
    expect(git(dir, 'rev-parse', 'origin/main').trim()).toBe(GOLDEN_TIPS.main);
    expect(localTips(dir)).toEqual(GOLDEN_TIPS);
    expect(
      git(dir, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/remotes').trim().split('\n').sort(),
    ).toEqual(
      [
        ...Object.entries(GOLDEN_TIPS).map(([b, o]) => `refs/remotes/origin/${b} ${o}`),
        `refs/remotes/origin/${HEAD_RECORD_REF} ${refs[HEAD_RECORD_REF]}`,
        `refs/remotes/origin/${META_REF} ${refs[META_REF]}`,
      ].sort(),
    );
    expect(git(dir, 'for-each-ref', '--format=%(refname)', 'refs/entity-git').trim()).toBe(META_REF); // the HEAD record is not a local ref
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');

    const before = server.requests;
    const again = await pushSession({ remote: remoteOf(), storage, root, sessionId: SID });
    expect(again.pushed).toEqual([]);
    expect(again.upToDate).toHaveLength(6);
    expect(server.requests - before).toBeLessThanOrEqual(2); // one ref discovery (+ one 401 for onAuth)
  });

  it('new turns push as fast-forwards of exactly the branches that moved', async () => {
    const sid = 'ff-1';
    const { dag, root, mirror, dir } = await goldenMachine(sid);
    server.createRepo(`sessions/${sid}.git`);
    await pushSession({ remote: remoteOf(), storage, root, sessionId: sid });
    const old = await lsRemote(sid);
    const leaf = await addTurn(dag, sid, 1, 'a7');
    await dag.setHead(sid, leaf);
    await dag.fillNode(sid, 'a6', 'Fixed.', null);
    const synced = await mirror.sync(sid);
    expect(synced.branchesMoved.sort()).toEqual(['fork-u4', 'main']);
    const result = await pushSession({ remote: remoteOf(), storage, root, sessionId: sid });
    expect(result.pushed.map((p) => p.ref).sort()).toEqual(['refs/heads/fork-u4', 'refs/heads/main']);
    expect(result.upToDate.sort()).toEqual([HEAD_RECORD_REF, META_REF, 'refs/heads/fork-u2e', 'refs/heads/retry-a4r']);
    const now = await lsRemote(sid);
    expect(headsOf(now)).toEqual(localTips(dir));
    const bare = join(server.root, 'sessions', `${sid}.git`);
    for (const b of ['main', 'fork-u4']) {
      expect(now[`refs/heads/${b}`]).not.toBe(old[`refs/heads/${b}`]);
      git(bare, 'merge-base', '--is-ancestor', old[`refs/heads/${b}`]!, now[`refs/heads/${b}`]!); // throws unless a fast-forward
    }
    expect(now[HEAD_RECORD_REF]).toBe(old[HEAD_RECORD_REF]);
    expect(git(bare, 'fsck', '--strict', '--no-dangling')).toBe('');
  });

  it('one shared DAG, two roots: one live with row edits between turns, one backfilled at the end: identical refs, and the second push is a no-op', async () => {
    const sid = 'shared-1';
    const dag = new MemoryDag();
    await writeGolden(dag, { sessionId: sid });
    const live = createNodeMirror({ dag, root: tempDir() });
    server.createRepo(`sessions/${sid}.git`);
    await live.sync(sid);
    // The application renames the session, joins a project, edits the metadata and switches model
    // between turns, with syncs in between.
    let prev = 'a7';
    for (let t = 1; t <= 3; t++) {
      prev = await addTurn(dag, sid, t, prev);
      await dag.setHead(sid, prev);
      await dag.updateSession(
        sid,
        t === 1
          ? { title: 'Renamed' }
          : t === 2
            ? { project_id: null, metadata: { tags: ['x'] } }
            : { model: 'another-model' },
      );
      await live.sync(sid);
    }
    await dag.updateSession(sid, { title: 'Renamed again' });
    await live.sync(sid);
    const backfilled = createNodeMirror({ dag, root: tempDir() });
    await backfilled.sync(sid);
    const refsOf = (dir: string) =>
      git(dir, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/entity-git');
    expect(refsOf(backfilled.repoPath(sid))).toBe(refsOf(live.repoPath(sid)));
    expect(JSON.parse(git(live.repoPath(sid), 'show', `${META_REF}:session.json`))).toMatchObject({
      title: 'Renamed again',
      model: 'another-model',
      metadata: { tags: ['x'] },
    });
    // The live root's reflog keeps each version of the row it saw: one entry a change (the first
    // value writes none, issue 22), the first version the old side of the first entry.
    const metaLog = readFileSync(join(live.repoPath(sid), '.git', 'logs', META_REF), 'utf8')
      .trim()
      .split('\n');
    expect(metaLog).toHaveLength(4);
    expect(new Set(metaLog.flatMap((line) => line.split(' ').slice(0, 2))).size).toBe(5);
    expect(git(live.repoPath(sid), 'reflog', 'show', '--format=%gs', META_REF).trim().split('\n')).toHaveLength(4);

    const first = await pushSession({
      remote: remoteOf(),
      storage,
      root: join(live.repoPath(sid), '..'),
      sessionId: sid,
    });
    expect(first.pushed.map((p) => p.ref)).toContain(META_REF);
    const second = await pushSession({
      remote: remoteOf(),
      storage,
      root: join(backfilled.repoPath(sid), '..'),
      sessionId: sid,
    });
    expect(second.pushed).toEqual([]);
    expect(second.rejected).toEqual([]);
    expect((await live.verify(sid)).differences).toEqual([]);
    expect((await backfilled.verify(sid)).differences).toEqual([]);
    for (const m of [live, backfilled]) {
      expect(git(m.repoPath(sid), 'status', '--porcelain')).toBe('');
      expect(git(m.repoPath(sid), 'fsck', '--strict', '--no-dangling')).toBe('');
    }
  });

  it('a remote per session: a function of the session id, under a remote name of its own', async () => {
    const { root, dir } = await goldenMachine('per-1');
    server.createRepo('sessions/team-a/per-1.git');
    const urls: string[] = [];
    const remote = defineRemote({
      name: 'backup',
      http,
      onAuth: () => ({ username: 'agent', password: TOKEN }),
      url: (sessionId) => {
        const u = `${server.origin}/sessions/team-a/${sessionId}.git`;
        urls.push(u);
        return u;
      },
    });
    const result = await pushSession({ remote, storage, root, sessionId: 'per-1' });
    expect(result.head).toBe('fork-u4');
    expect(urls).toContain(`${server.origin}/sessions/team-a/per-1.git`);
    const refs = await lsRemote('team-a/per-1');
    expect(Object.keys(headsOf(refs)).sort()).toEqual(Object.keys(GOLDEN_TIPS).sort());
    expect(headsOf(refs)).toEqual(localTips(dir));
    expect(git(dir, 'config', 'remote.backup.url').trim()).toBe(`${server.origin}/sessions/team-a/per-1.git`);
    expect(git(dir, 'rev-parse', 'backup/main').trim()).toBe(localTips(dir).main);
    expect(() => git(dir, 'config', 'remote.origin.url')).toThrow();
    // A function that gives no http(s) URL is refused when it is used.
    const bad = defineRemote({ url: () => 'file:///tmp/x.git', http });
    expect((await failure(pushSession({ remote: bad, storage, root, sessionId: 'per-1' }))).code).toBe(
      'INVALID_OPTION',
    );
  });
});
