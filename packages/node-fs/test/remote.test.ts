import {
  createMirrorService,
  createPushScheduler,
  defineRemote,
  fetchSession,
  HEAD_RECORD_REF,
  isEntityGitError,
  MemoryDag,
  META_REF,
  pushSession,
  restoreSessions,
  type EntityGitError,
  type PushSchedulerEvents,
  type RemoteOptions,
} from '@entity-git/core';
import { createNodeMirror, nodeStorage } from '@entity-git/node-fs';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';
import http from 'isomorphic-git/http/node';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoOf, storeFor, transportFs } from '../../core/src/remote/transport.js';
import { startGitHttpServer, type GitHttpServer } from './git-http-server.js';
import { git, tempDir } from './helpers.js';

const SID = GOLDEN_SESSION.id;
const GOLDEN_TIPS = {
  main: '2d6739e6531c79338d437bcd12e6a1911db229f3',
  'retry-a4r': 'd080c326d39a5951408d85b37d2ad5734ef66218',
  'fork-u2e': '91b1853f7d112a2d1c527c327cbb1fe5c82401c6',
  'fork-u4': '17a4c695c75333ca3ac7710e31cd26d953bab6d6',
};
const TOKEN = 's3cret-token';
const run = promisify(execFile);

let server: GitHttpServer;
beforeAll(async () => {
  server = await startGitHttpServer({ token: TOKEN });
});
afterAll(async () => {
  await server?.close();
});

const storage = nodeStorage();
const remoteOf = (overrides: Partial<RemoteOptions> = {}) =>
  defineRemote({ url: server.template, http, onAuth: () => ({ username: 'agent', password: TOKEN }), ...overrides });

/** Native git against the in-process server: asynchronous, so the server can answer. */
async function gitNet(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('git', ['-c', `http.extraHeader=Authorization: Bearer ${TOKEN}`, ...args], {
    cwd,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd, GIT_TERMINAL_PROMPT: '0' },
  });
  return stdout;
}

/** `git ls-remote` of the bare repository, through the HTTP server like any client. */
async function lsRemote(sessionPath: string): Promise<Record<string, string>> {
  const url = `${server.origin}/sessions/${sessionPath}.git`;
  const out = await gitNet(tempDir(), 'ls-remote', url);
  return Object.fromEntries(
    out
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t').reverse()),
  );
}
const headsOf = (refs: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(refs)
      .filter(([r]) => r.startsWith('refs/heads/'))
      .map(([r, o]) => [r.slice(11), o]),
  );
const localTips = (dir: string) =>
  Object.fromEntries(
    git(dir, 'for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads')
      .trim()
      .split('\n')
      .map((l) => l.split(' ')),
  );

async function goldenMachine(sessionId = SID) {
  const dag = new MemoryDag();
  await writeGolden(dag, { sessionId });
  const root = tempDir();
  const mirror = createNodeMirror({ dag, root });
  await mirror.sync(sessionId);
  return { dag, root, mirror, dir: mirror.repoPath(sessionId) };
}

async function addTurn(dag: MemoryDag, sid: string, t: number, prev: string): Promise<string> {
  const base = GOLDEN_SESSION.created_at + 1000 + t * 10;
  await dag.appendNode({
    id: `x-u${t}`,
    session_id: sid,
    role: 'user',
    content: `more ${t}`,
    predecessor: prev,
    created_at: base,
  });
  await dag.appendNode({
    id: `x-a${t}`,
    session_id: sid,
    role: 'assistant',
    content: `done ${t}`,
    predecessor: `x-u${t}`,
    created_at: base + 1,
  });
  return `x-a${t}`;
}

/** The typed error a promise rejects with (fails the test if it resolves). */
const failure = (p: Promise<unknown>): Promise<EntityGitError> =>
  p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as EntityGitError,
  );

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
    // The live root's reflog keeps each version of the row it saw.
    expect(git(live.repoPath(sid), 'reflog', 'show', '--format=%gs', META_REF).trim().split('\n')).toHaveLength(5);

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
      noop: false,
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
