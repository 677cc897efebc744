import { createMirror, MemoryDag, reconcile } from '@entity-git/core';
import { createNodeMirror, nodeStorage } from '@entity-git/node-fs';
import { faultyStorage, GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, growingSession, tempDir } from './helpers.js';
import { builtChild } from '@entity-git/test-utils/node-child';

const SID = GOLDEN_SESSION.id;
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
      .filter(Boolean)
      .map((l) => l.split(' ')),
  );

async function expectGolden(dag: MemoryDag, root: string) {
  const dir = join(root, SID);
  const mirror = createNodeMirror({ dag, root, lock: { staleMs: 200 } });
  const report = await reconcile({ dag, mirror });
  expect(report.ok).toBe(true);
  expect(tipsOf(dir)).toEqual(GOLDEN_TIPS);
  expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
  expect(git(dir, 'status', '--porcelain')).toBe('');
  expect((await mirror.verify(SID)).ok).toBe(true);
  expect(await mirror.sync(SID)).toMatchObject({ noop: true });
}

describe('a crash at every write of a sync', () => {
  it('leaves a repository that reconcile brings to the uninterrupted ids, for every k', async () => {
    const probe = faultyStorage(nodeStorage());
    const dag = new MemoryDag();
    await writeGolden(dag);
    await createMirror({ dag, storage: probe, root: tempDir() }).sync(SID);
    const writes = probe.stats.writes;
    expect(writes).toBeGreaterThan(20);
    for (let k = 0; k < writes; k++) {
      const root = tempDir();
      const storage = faultyStorage(nodeStorage());
      storage.crashAfter(k);
      await expect(createMirror({ dag, storage, root }).sync(SID)).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
      // After the crash: a new process (a fresh mirror, no memory of the old one) starts up.
      await expectGolden(dag, root);
    }
  });

  it('also when a live turn writes its objects as a pack: every k leaves what a later sync completes to the uninterrupted ids', async () => {
    // Two turns synced, then a third, live (the extended path, which writes the turn's pack).
    const start = async (root: string, storage = nodeStorage()) => {
      const g = growingSession('Crash in a turn pack');
      await g.turns(2);
      const m = createMirror({ dag: g.dag, storage, root, packTurns: true });
      await m.sync('s');
      await g.turns(1);
      return { g, m };
    };
    const root0 = tempDir();
    const probe = faultyStorage(nodeStorage());
    const ref = await start(root0, probe);
    const at = probe.stats.writes;
    expect(await ref.m.sync('s')).toMatchObject({ commitsWritten: 1, derivation: 'extended' });
    const writes = probe.stats.writes - at;
    // The backfill's pack (a short backfill is one pack) and the turn's.
    expect(readdirSync(join(root0, 's', '.git', 'objects', 'pack')).filter((n) => n.endsWith('.pack'))).toHaveLength(2);
    const tip = git(join(root0, 's'), 'rev-parse', 'main').trim();
    expect(writes).toBeGreaterThan(8);
    for (let k = 0; k < writes; k++) {
      const root = tempDir();
      const storage = faultyStorage(nodeStorage());
      const { g, m } = await start(root, storage);
      storage.crashAfter(k);
      await expect(m.sync('s')).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
      const fresh = createNodeMirror({ dag: g.dag, root, lock: { staleMs: 200 } });
      expect((await reconcile({ dag: g.dag, mirror: fresh })).ok).toBe(true);
      const dir = join(root, 's');
      expect(git(dir, 'rev-parse', 'main').trim()).toBe(tip);
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(dir, 'status', '--porcelain')).toBe('');
    }
  });

  it('also when each turn is synced live and the crash hits the second turn', async () => {
    const probe = faultyStorage(nodeStorage());
    const dag = new MemoryDag();
    await writeGolden(dag);
    const root0 = tempDir();
    const m0 = createMirror({ dag, storage: probe, root: root0 });
    await dag.setHead(SID, 'a6');
    await m0.sync(SID);
    await dag.fillNode(SID, 'a6', 'Filled.', null);
    const before = probe.stats.writes;
    await m0.sync(SID);
    const writes = probe.stats.writes - before;
    for (let k = 0; k < writes; k++) {
      const root = tempDir();
      const d = new MemoryDag();
      await writeGolden(d);
      await d.setHead(SID, 'a6');
      const storage = faultyStorage(nodeStorage());
      const m = createMirror({ dag: d, storage, root });
      await m.sync(SID);
      await d.fillNode(SID, 'a6', 'Filled.', null);
      storage.crashAfter(k);
      await expect(m.sync(SID)).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
      const fresh = createNodeMirror({ dag: d, root, lock: { staleMs: 200 } });
      expect((await reconcile({ dag: d, mirror: fresh })).ok).toBe(true);
      const dir = join(root, SID);
      expect(tipsOf(dir)).toEqual(tipsOf(join(root0, SID)));
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(dir, 'status', '--porcelain')).toBe('');
    }
  });
});

describe('a process killed with SIGKILL in the middle of syncing', () => {
  it('leaves locks and torn files that the next process recovers from', async () => {
    const child = builtChild(join(import.meta.dirname, 'sync-child.ts'));
    for (const delay of [150, 300, 450, 600, 800]) {
      const root = tempDir();
      const p = spawn(process.execPath, [child, root, '1000'], { stdio: 'ignore' });
      await new Promise((r) => setTimeout(r, delay));
      p.kill('SIGKILL');
      await new Promise((r) => p.once('exit', r));
      const dag = new MemoryDag();
      await writeGolden(dag);
      if (!existsSync(join(root, SID))) continue;
      await expectGolden(dag, root);
    }
  });
});

describe('planted damage', () => {
  it('empty and truncated object files where the next objects go are rewritten', async () => {
    const dag = new MemoryDag();
    await writeGolden(dag);
    await dag.setHead(SID, 'a6');
    const root = tempDir();
    const mirror = createNodeMirror({ dag, root });
    await mirror.sync(SID);
    // Learn the ids the next turn writes from a scratch copy, then plant bad files there.
    const scratch = tempDir();
    const d2 = new MemoryDag();
    await writeGolden(d2);
    await d2.setHead(SID, 'a6');
    await d2.fillNode(SID, 'a6', 'Filled.', null);
    const m2 = createNodeMirror({ dag: d2, root: scratch });
    await m2.sync(SID);
    const sdir = join(scratch, SID);
    const next = [
      git(sdir, 'rev-parse', 'main').trim(),
      git(sdir, 'rev-parse', 'main^{tree}').trim(),
      git(sdir, 'rev-parse', 'main:messages').trim(),
      git(sdir, 'rev-parse', 'main:messages/000017-a-a6.json').trim(),
    ];
    const dir = join(root, SID);
    next.forEach((oid, i) => {
      const f = join(dir, '.git/objects', oid.slice(0, 2), oid.slice(2));
      if (!existsSync(join(dir, '.git/objects', oid.slice(0, 2))))
        require('node:fs').mkdirSync(join(dir, '.git/objects', oid.slice(0, 2)));
      writeFileSync(f, i % 2 ? Buffer.from([0x78, 0x01, 0x2b]) : Buffer.alloc(0));
    });
    await dag.fillNode(SID, 'a6', 'Filled.', null);
    await mirror.sync(SID);
    expect(git(dir, 'rev-parse', 'main').trim()).toBe(next[0]);
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('a 0-byte or 20-byte ref, and NUL bytes in HEAD or config, hurt only that repository', async () => {
    const dag = new MemoryDag();
    for (const s of ['r1', 'r2', 'r3', 'r4', 'ok']) await writeGolden(dag, { sessionId: s });
    const root = tempDir();
    const mirror = createNodeMirror({ dag, root });
    await reconcile({ dag, mirror });
    const fresh = Object.fromEntries(['r1', 'r2', 'r3', 'r4', 'ok'].map((s) => [s, tipsOf(join(root, s))]));
    const okFiles = readdirSync(join(root, 'ok', '.git', 'objects'));
    writeFileSync(join(root, 'r1', '.git/refs/heads/main'), '');
    writeFileSync(join(root, 'r2', '.git/refs/heads/fork-u4'), '17a4c695c75333ca3ac7');
    writeFileSync(join(root, 'r3', '.git/HEAD'), 'ref: refs/\u0000\u0000heads/main\n');
    writeFileSync(join(root, 'r4', '.git/config'), '[core]\n\u0000\u0000\u0000\n');
    const after = createNodeMirror({ dag, root });
    const report = await reconcile({ dag, mirror: after });
    expect(report.entries.map((e) => [e.sessionId, e.action])).toEqual([
      ['r1', 'repaired'],
      ['r2', 'repaired'],
      ['r3', 'repaired'],
      ['r4', 'repaired'],
      ['ok', 'unchanged'],
    ]);
    for (const s of ['r1', 'r2', 'r3', 'r4', 'ok']) {
      expect(tipsOf(join(root, s))).toEqual(fresh[s]);
      expect(git(join(root, s), 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(join(root, s), 'status', '--porcelain')).toBe('');
    }
    expect(readdirSync(join(root, 'ok', '.git', 'objects'))).toEqual(okFiles);
  });
});
