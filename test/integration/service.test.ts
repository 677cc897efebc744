import { createMirror, createMirrorService, MemoryDag, reconcile, type ServiceEvents } from '@entity-git/core';
import { createNodeMirror, nodeStorage } from '@entity-git/node-fs';
import { faultyStorage, GOLDEN_SESSION, goldenNodes, writeGolden } from '@entity-git/test-utils';
import { rmSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../../packages/node-fs/test/helpers.js';

const GOLDEN_TIPS = {
  main: '2d6739e6531c79338d437bcd12e6a1911db229f3',
  'retry-a4r': 'd080c326d39a5951408d85b37d2ad5734ef66218',
  'fork-u2e': '91b1853f7d112a2d1c527c327cbb1fe5c82401c6',
  'fork-u4': '17a4c695c75333ca3ac7710e31cd26d953bab6d6',
};
const tipsOf = (dir: string) =>
  Object.fromEntries(
    git(dir, 'for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads')
      .trim()
      .split('\n')
      .map((l) => l.split(' ')),
  );

async function addTurn(dag: MemoryDag, sid: string, t: number, prev: string | null): Promise<string> {
  const base = 1779500000 + t * 10;
  const u = `${sid}-u${t}`,
    a = `${sid}-a${t}`,
    tool = `${sid}-t${t}`,
    b = `${sid}-b${t}`;
  await dag.appendNode({
    id: u,
    session_id: sid,
    role: 'user',
    content: `turn ${t} of ${sid}`,
    predecessor: prev,
    created_at: base,
  });
  await dag.appendNode({
    id: a,
    session_id: sid,
    role: 'assistant',
    content: 'calling',
    predecessor: u,
    created_at: base + 1,
  });
  await dag.appendNode({
    id: tool,
    session_id: sid,
    role: 'tool',
    content: 'ok',
    predecessor: a,
    caller: a,
    created_at: base + 2,
    metadata: { tool: 'read' },
  });
  await dag.appendNode({
    id: b,
    session_id: sid,
    role: 'assistant',
    content: `done ${t}`,
    predecessor: tool,
    created_at: base + 3,
  });
  return b;
}

describe('the mirror service', () => {
  it('50 sessions × 20 turns scheduled as fast as possible: one commit per turn, every repo clean', async () => {
    const dag = new MemoryDag();
    const mirror = createNodeMirror({ dag, root: tempDir() });
    const service = createMirrorService({ mirror, concurrency: 4 });
    const failures: unknown[] = [];
    service.on('failed', (e) => failures.push(e));
    const sessions = Array.from({ length: 50 }, (_, i) => `load-${i}`);
    const last = new Map<string, string | null>();
    for (const sid of sessions) {
      await dag.createSession({ id: sid, created_at: 1779500000 });
      last.set(sid, null);
    }
    for (let t = 1; t <= 20; t++) {
      for (const sid of sessions) {
        last.set(sid, await addTurn(dag, sid, t, last.get(sid)!));
        service.notify(sid);
      }
    }
    await service.drain();
    expect(failures).toEqual([]);
    expect(service.status()).toMatchObject({ queued: 0, running: 0, backoff: 0 });
    for (const sid of sessions) {
      const dir = mirror.repoPath(sid);
      const turns = git(dir, 'log', '--format=%(trailers:key=Turn,valueonly)', 'main').trim().split(/\n+/);
      expect(turns).toEqual(Array.from({ length: 20 }, (_, i) => String(20 - i)));
      expect((await mirror.verify(sid)).ok).toBe(true);
      expect(git(dir, 'status', '--porcelain')).toBe('');
    }
    expect(git(mirror.repoPath('load-7'), 'fsck', '--strict')).toBe('');
  });

  it('coalesces calls, never throws into the caller, and reports permanent errors once', async () => {
    const dag = new MemoryDag();
    await writeGolden(dag);
    const mirror = createNodeMirror({ dag, root: tempDir() });
    const service = createMirrorService({ mirror });
    const seen: string[] = [];
    for (const e of ['committed', 'synced', 'failed', 'retrying'] as const)
      service.on(e, (p) => seen.push(`${e}:${p.sessionId}`));
    for (let i = 0; i < 10; i++) service.notify(GOLDEN_SESSION.id);
    expect(() => service.notify('')).not.toThrow();
    expect(() => service.notify(42 as unknown as string)).not.toThrow();
    service.notify('no-such-session');
    await service.drain();
    expect(seen.filter((s) => s.endsWith(GOLDEN_SESSION.id))).toEqual([
      `synced:${GOLDEN_SESSION.id}`,
      `committed:${GOLDEN_SESSION.id}`,
    ]);
    expect(seen.filter((s) => s.includes('no-such-session'))).toEqual(['failed:no-such-session']);
    expect(seen.filter((s) => s.startsWith('failed:') && !s.includes('no-such'))).toEqual(['failed:']);
    const st = service.status().sessions.find((s) => s.sessionId === 'no-such-session')!;
    expect(st.lastError?.code).toBe('SESSION_NOT_FOUND');
    expect(tipsOf(mirror.repoPath(GOLDEN_SESSION.id))).toEqual(GOLDEN_TIPS);
  });

  it('retries writes that fail: for every k, the final ids equal an undisturbed run', async () => {
    for (let k = 1; k <= 12; k++) {
      const dag = new MemoryDag();
      await writeGolden(dag);
      const storage = faultyStorage(nodeStorage());
      const root = tempDir();
      const mirror = createMirror({ dag, storage, root });
      const service = createMirrorService({ mirror, baseDelayMs: 1, attempts: 20 });
      const retries: ServiceEvents['retrying'][] = [];
      service.on('retrying', (e) => retries.push(e));
      storage.failNext(k);
      service.notify(GOLDEN_SESSION.id);
      await service.drain();
      expect(storage.stats.failed).toBe(k);
      expect(retries.length).toBeGreaterThan(0);
      expect(retries.every((r) => r.error.code === 'STORAGE_ERROR')).toBe(true);
      const dir = join(root, GOLDEN_SESSION.id);
      expect(tipsOf(dir)).toEqual(GOLDEN_TIPS);
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(dir, 'status', '--porcelain')).toBe('');
      expect((await mirror.verify(GOLDEN_SESSION.id)).ok).toBe(true);
    }
  });
});

describe('the service, a live turn failing', () => {
  /** The golden session up to its last two nodes, synced; then the rest arrives as one more turn. */
  async function liveTurn(storage: ReturnType<typeof faultyStorage>, root: string) {
    const dag = new MemoryDag();
    const nodes = goldenNodes();
    await dag.createSession({ ...GOLDEN_SESSION, head: null });
    for (const n of nodes.slice(0, -2)) await dag.addNode(n);
    const mirror = createMirror({ dag, storage, root });
    await mirror.sync(GOLDEN_SESSION.id);
    for (const n of nodes.slice(-2)) await dag.addNode(n);
    await dag.setHead(GOLDEN_SESSION.id, GOLDEN_SESSION.head);
    return { dag, mirror };
  }

  it('the storage fails the k-th write of a turn, for every k of that turn: retried, ids equal an undisturbed run', async () => {
    // How many writes the turn takes when nothing fails.
    const plain = faultyStorage(nodeStorage());
    const undisturbed = await liveTurn(plain, tempDir());
    const before = plain.stats.writes;
    await undisturbed.mirror.sync(GOLDEN_SESSION.id);
    const writes = plain.stats.writes - before;
    expect(writes).toBeGreaterThan(3);
    const failedPaths: string[] = [];
    for (let k = 1; k <= writes; k++) {
      const storage = faultyStorage(nodeStorage());
      const root = tempDir();
      const { mirror } = await liveTurn(storage, root);
      const service = createMirrorService({ mirror, baseDelayMs: 1, attempts: writes + 5 });
      const retries: ServiceEvents['retrying'][] = [];
      const committed: ServiceEvents['committed'][] = [];
      const synced: ServiceEvents['synced'][] = [];
      service.on('retrying', (e) => retries.push(e));
      service.on('committed', (e) => committed.push(e));
      service.on('synced', (e) => synced.push(e));
      storage.failAt(k);
      service.notify(GOLDEN_SESSION.id);
      await service.drain();
      expect(storage.stats.failed, `k=${k}`).toBe(1);
      const [failedPath] = storage.stats.failedPaths;
      failedPaths.push(failedPath!);
      expect(retries.length, `k=${k}`).toBe(1);
      expect(synced.length, `k=${k}`).toBe(1);
      // Only the last write failed, the state log's append: the turn's commit and ref were in place,
      // so the retry finds nothing to write (\`synced\`, not \`committed\`).
      expect(committed.length, `k=${k} (${failedPath})`).toBe(failedPath!.endsWith('/entity-git-state.jsonl') ? 0 : 1);
      const dir = join(root, GOLDEN_SESSION.id);
      expect(tipsOf(dir), `k=${k}`).toEqual(GOLDEN_TIPS);
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(dir, 'status', '--porcelain')).toBe('');
      expect((await mirror.verify(GOLDEN_SESSION.id)).ok).toBe(true);
    }
    // Every kind of write of a turn was failed once: objects, the ref and its reflog, the
    // working tree and its index, the state log.
    for (const part of [
      '/.git/objects/',
      '/.git/refs/heads/',
      '/.git/logs/',
      '/messages/',
      '/.git/index',
      '/.git/entity-git-state',
    ]) {
      expect(
        failedPaths.some((p) => p.includes(part)),
        part,
      ).toBe(true);
    }
  });
});

describe('reconcile', () => {
  it('backfills a deleted repo, repairs a truncated ref and lost objects, to ids equal a fresh backfill', async () => {
    const dag = new MemoryDag();
    await writeGolden(dag);
    await writeGolden(dag, { sessionId: 'g2' });
    await writeGolden(dag, { sessionId: 'g3' });
    await writeGolden(dag, { sessionId: 'g4' });
    const root = tempDir();
    // Loose objects, to remove below (a short backfill is one pack by default).
    const mirror = createNodeMirror({ dag, root, packTurns: false });
    const progress: string[] = [];
    const first = await reconcile({
      dag,
      mirror,
      onProgress: (p) => progress.push(`${p.done}/${p.total} ${p.sessionId} ${p.action}`),
    });
    expect(progress).toEqual([
      '1/4 golden-1 backfilled',
      '2/4 g2 backfilled',
      '3/4 g3 backfilled',
      '4/4 g4 backfilled',
    ]);
    expect(first.ok).toBe(true);
    const fresh = Object.fromEntries(['golden-1', 'g2', 'g3', 'g4'].map((s) => [s, tipsOf(mirror.repoPath(s))]));
    expect(fresh['golden-1']).toEqual(GOLDEN_TIPS);

    rmSync(mirror.repoPath('golden-1'), { recursive: true });
    truncateSync(join(mirror.repoPath('g2'), '.git/refs/heads/main'), 0);
    writeFileSync(join(mirror.repoPath('g3'), '.git/refs/heads/retry-a4r'), 'd080c326d39a5951408d');
    const g4 = mirror.repoPath('g4');
    const tip = git(g4, 'rev-parse', 'fork-u4').trim();
    const tree = git(g4, 'rev-parse', 'fork-u4^{tree}').trim();
    const messages = git(g4, 'rev-parse', 'fork-u4:messages').trim();
    for (const oid of [tip, tree, messages]) unlinkSync(join(g4, '.git/objects', oid.slice(0, 2), oid.slice(2)));

    // full: g4's objects are gone below intact refs, which only the full check reads.
    const report = await reconcile({ dag, mirror, full: true });
    expect(report.entries.map((e) => [e.sessionId, e.action])).toEqual([
      ['golden-1', 'backfilled'],
      ['g2', 'repaired'],
      ['g3', 'repaired'],
      ['g4', 'repaired'],
    ]);
    expect(report.entries[1]!.differences.map((d) => d.kind)).toContain('corrupt');
    expect(report.entries[3]!.differences.map((d) => d.kind)).toContain('missing-object');
    for (const s of ['golden-1', 'g2', 'g3', 'g4']) {
      const dir = mirror.repoPath(s);
      expect(tipsOf(dir)).toEqual(fresh[s]);
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(dir, 'status', '--porcelain')).toBe('');
    }
    const again = await reconcile({ dag, mirror });
    expect(again.entries.every((e) => e.action === 'unchanged')).toBe(true);
  });

  it('keeps every commit id when the row changes and the cache is lost; the meta ref shows the row', async () => {
    const dag = new MemoryDag();
    await writeGolden(dag);
    const mirror = createNodeMirror({ dag, root: tempDir() });
    await mirror.sync(GOLDEN_SESSION.id);
    const dir = mirror.repoPath(GOLDEN_SESSION.id);
    await dag.updateSession(GOLDEN_SESSION.id, { title: 'Renamed later' });
    expect((await mirror.verify(GOLDEN_SESSION.id)).differences.map((d) => d.kind)).toEqual(['meta-differs']);
    unlinkSync(join(dir, '.git/entity-git-state.json'));
    const report = await reconcile({ dag, mirror });
    expect(report.entries.map((e) => e.action)).toEqual(['repaired']);
    expect(tipsOf(dir)).toEqual(GOLDEN_TIPS);
    expect((await mirror.verify(GOLDEN_SESSION.id)).differences).toEqual([]);
    expect(JSON.parse(git(dir, 'show', 'refs/entity-git/meta:session.json')).title).toBe('Renamed later');
    await dag.setHead(GOLDEN_SESSION.id, 'a6');
    await dag.fillNode(GOLDEN_SESSION.id, 'a6', 'Fixed.', null);
    await mirror.sync(GOLDEN_SESSION.id);
    expect(git(dir, 'rev-parse', 'main~1').trim()).toBe(GOLDEN_TIPS.main);
    expect(git(dir, 'show', 'main:meta.json')).toBe('{\n  "created_at": 1779500000,\n  "id": "golden-1"\n}\n');
    expect((await mirror.verify(GOLDEN_SESSION.id)).differences).toEqual([]);
  });

  it('is safe to run while the service is live: both serialize on the session lock', async () => {
    const dag = new MemoryDag();
    const mirror = createNodeMirror({ dag, root: tempDir() });
    const service = createMirrorService({ mirror });
    const failures: unknown[] = [];
    service.on('failed', (e) => failures.push(e));
    const sessions = Array.from({ length: 10 }, (_, i) => `live-${i}`);
    const last = new Map<string, string | null>();
    for (const sid of sessions) {
      await dag.createSession({ id: sid, created_at: 1779500000 });
      last.set(sid, null);
    }
    const reconciles: Promise<unknown>[] = [];
    for (let t = 1; t <= 8; t++) {
      for (const sid of sessions) {
        last.set(sid, await addTurn(dag, sid, t, last.get(sid)!));
        service.notify(sid);
      }
      if (t % 3 === 0) reconciles.push(reconcile({ dag, mirror }));
    }
    const reports = (await Promise.all(reconciles)) as Awaited<ReturnType<typeof reconcile>>[];
    await service.drain();
    expect(failures).toEqual([]);
    expect(reports.every((r) => r.ok)).toBe(true);
    const final = await reconcile({ dag, mirror });
    expect(final.entries.map((e) => e.action)).toEqual(sessions.map(() => 'unchanged'));
    for (const sid of sessions) {
      expect(git(mirror.repoPath(sid), 'rev-list', '--count', 'main').trim()).toBe('8');
      expect(git(mirror.repoPath(sid), 'fsck', '--strict', '--no-dangling')).toBe('');
    }
  });
});
