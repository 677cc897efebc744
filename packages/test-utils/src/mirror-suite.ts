import { createMirror, type DagNode, MemoryDag, type Mirror } from '@entity-git/core';
import { describe, expect, it } from 'vitest';
import { GOLDEN_SESSION, goldenNodes, writeGolden } from './golden-dag.js';
import type { StorageFixture } from './storage-suite.js';

/**
 * The branch tips of the golden session: fixed by the golden DAG, the default identity and the
 * flat layout, on every storage (@entity-git/node-fs and Chromium assert the same literals in their golden tests).
 */
export const GOLDEN_MIRROR_TIPS = Object.freeze({
  main: '2d6739e6531c79338d437bcd12e6a1911db229f3',
  'retry-a4r': 'd080c326d39a5951408d85b37d2ad5734ef66218',
  'fork-u2e': '91b1853f7d112a2d1c527c327cbb1fe5c82401c6',
  'fork-u4': '17a4c695c75333ca3ac7710e31cd26d953bab6d6',
});
/** Turn 1 of the golden session, shared by every branch. */
export const GOLDEN_MIRROR_TURN1 = '4b1cc3d267e0d1e614cf1f5670401133cff1ac7f';
/** main's third turn, once the DAG head moves to the placeholder `a6` and it is filled. */
export const GOLDEN_MIRROR_FILLED_MAIN = '9283c4f2c088bb5a57b8195c890b61f523eb684b';

const SID = GOLDEN_SESSION.id;
const ids = (messages: DagNode[]) => messages.map((m) => m.id);
const tips = async (mirror: Mirror) => Object.fromEntries((await mirror.branches(SID)).map((b) => [b.name, b.commit]));

/** Registers test `title`, run on a mirror over a fresh fixture's storage and an empty `MemoryDag`. */
type WithMirror = (title: string, fn: (mirror: Mirror, dag: MemoryDag) => Promise<void>) => void;

/**
 * The mirror conformance suite: core's one mirror (`createMirror`) over a given storage, with the
 * golden DAG. The same DAG gives the same commit ids on every storage; a second sync writes
 * nothing; log, branches and replay read what the mirror wrote; verify finds it equal to the DAG.
 */
export function testMirror(options: { name: string; create(): Promise<StorageFixture> }): void {
  const { name, create } = options;
  const withMirror: WithMirror = (title, fn) =>
    it(title, async () => {
      const f = await create();
      try {
        const dag = new MemoryDag();
        await fn(createMirror({ dag, storage: f.storage, root: `${f.root}/sessions` }), dag);
      } finally {
        await f.cleanup?.();
      }
    });

  describe(`mirror conformance: ${name}`, () => {
    syncTests(withMirror);
    readTests(withMirror);
    branchAndVerifyTests(withMirror);
  });
}

/** Syncing: the golden ids, a second sync that writes nothing, turn-by-turn syncs equal to a backfill. */
function syncTests(withMirror: WithMirror): void {
  withMirror('writes the golden commit ids, branch names and HEAD', async (mirror, dag) => {
    await writeGolden(dag);
    const result = await mirror.sync(SID);
    expect(result).toMatchObject({ sessionId: SID, head: 'fork-u4', commitsWritten: 5, noop: false });
    expect([...result.branchesMoved].sort()).toEqual(Object.keys(GOLDEN_MIRROR_TIPS).sort());
    expect(await tips(mirror)).toEqual(GOLDEN_MIRROR_TIPS);
    for (const branch of Object.keys(GOLDEN_MIRROR_TIPS))
      expect((await mirror.log(SID, { branch })).at(-1)!.sha).toBe(GOLDEN_MIRROR_TURN1);
  });

  withMirror('syncs idempotently: a second sync writes nothing and moves nothing', async (mirror, dag) => {
    await writeGolden(dag);
    await mirror.sync(SID);
    const again = await mirror.sync(SID);
    expect(again).toMatchObject({
      noop: true,
      commitsWritten: 0,
      branchesMoved: [],
      objectsWritten: 0,
      head: 'fork-u4',
    });
    expect(await mirror.sync(SID, { full: true })).toMatchObject({ commitsWritten: 0, branchesMoved: [] });
    expect(await tips(mirror)).toEqual(GOLDEN_MIRROR_TIPS);
  });

  withMirror('gives turn-by-turn live syncing the ids of a backfill', async (mirror, dag) => {
    await dag.createSession({ ...GOLDEN_SESSION, head: null });
    let turns = 0;
    for (const n of goldenNodes()) {
      // A dispatcher syncs when a turn ends, that is before the next user message is written.
      if (n.role === 'user' && turns++ > 0) await mirror.sync(SID);
      await dag.addNode(n);
    }
    await mirror.sync(SID);
    await dag.setHead(SID, GOLDEN_SESSION.head);
    expect(await mirror.sync(SID)).toMatchObject({ head: 'fork-u4', commitsWritten: 0 });
    expect(await tips(mirror)).toEqual(GOLDEN_MIRROR_TIPS);
  });
}

/** Reading what the mirror wrote: a branch’s log, and a turn replayed from objects. */
function readTests(withMirror: WithMirror): void {
  withMirror('logs a branch newest first, following first parents, with the trailers', async (mirror, dag) => {
    await writeGolden(dag);
    await mirror.sync(SID);
    const main = await mirror.log(SID, { branch: 'main' });
    expect(main.map((c) => [c.sha, c.turn, c.node, c.seq])).toEqual([
      [GOLDEN_MIRROR_TIPS.main, 2, 'a4', 12],
      [GOLDEN_MIRROR_TURN1, 1, 'a2', 6],
    ]);
    expect(main.map((c) => c.parents)).toEqual([[GOLDEN_MIRROR_TURN1], []]);
    expect(main.map((c) => c.subject)).toEqual([
      'turn 2: Now grep for TODO in every file, including the tests and the',
      'turn 1: 列出 src 目录中的文件 🙂 请简短回答',
    ]);
    expect(main[0]!.time).toBe(1779500018);
    expect(main[0]!.message).toBe(
      'turn 2: Now grep for TODO in every file, including the tests and the\n\nassistant: Found 3 TODOs.\ntools: grep × 3\n\n' +
        '[meta: turn took 7.5s, 3 tools, 90 tokens]\n\nSession: golden-1\nTurn: 2\nNode: a4\nSeq: 12\n',
    );
    // Without a branch: HEAD's.
    expect((await mirror.log(SID)).map((c) => c.sha)).toEqual([GOLDEN_MIRROR_TIPS['fork-u4'], GOLDEN_MIRROR_TURN1]);
    await expect(mirror.log(SID, { branch: 'nope' })).rejects.toMatchObject({ code: 'BRANCH_NOT_FOUND' });
  });

  withMirror('replays a turn from objects: its messages, turn N of M, prev and next', async (mirror, dag) => {
    await writeGolden(dag);
    await mirror.sync(SID);
    const first = await mirror.read(SID, GOLDEN_MIRROR_TURN1, { branch: 'main' });
    expect(first).toMatchObject({
      sessionId: SID,
      commit: GOLDEN_MIRROR_TURN1,
      branch: 'main',
      turn: 1,
      turns: 2,
      prev: null,
      next: GOLDEN_MIRROR_TIPS.main,
    });
    expect(first.messages).toEqual(goldenNodes().slice(0, 6));
    expect(first.meta).toEqual({ created_at: 1779500000, id: 'golden-1' });
    const second = await mirror.read(SID, GOLDEN_MIRROR_TIPS.main, { branch: 'main' });
    expect(second).toMatchObject({ turn: 2, turns: 2, prev: GOLDEN_MIRROR_TURN1, next: null });
    expect(ids(second.messages)).toEqual(['s1', 'u1', 'a1', 't1', 't2', 'a2', 'u2', 'a3', 't3', 't4', 't5', 'a4']);
    // Without a branch: HEAD's, which holds turn 1.
    expect(await mirror.read(SID, GOLDEN_MIRROR_TURN1)).toMatchObject({
      branch: 'fork-u4',
      next: GOLDEN_MIRROR_TIPS['fork-u4'],
    });
    await expect(mirror.read(SID, 'f'.repeat(40))).rejects.toMatchObject({ code: 'COMMIT_NOT_FOUND' });
  });
}

/** Branches of forks and retries, HEAD following the DAG head, and verify against the DAG. */
function branchAndVerifyTests(withMirror: WithMirror): void {
  withMirror('makes a branch of each fork and retry, HEAD on the branch of the DAG head', async (mirror, dag) => {
    await writeGolden(dag);
    await mirror.sync(SID);
    expect((await mirror.branches(SID)).map((b) => [b.name, b.commit, b.turns, b.head])).toEqual([
      ['main', GOLDEN_MIRROR_TIPS.main, 2, false],
      ['fork-u2e', GOLDEN_MIRROR_TIPS['fork-u2e'], 2, false],
      ['fork-u4', GOLDEN_MIRROR_TIPS['fork-u4'], 2, true],
      ['retry-a4r', GOLDEN_MIRROR_TIPS['retry-a4r'], 2, false],
    ]);
    const fork = await mirror.read(SID, GOLDEN_MIRROR_TIPS['fork-u4'], { branch: 'fork-u4' });
    expect(fork).toMatchObject({ turn: 2, turns: 2, prev: GOLDEN_MIRROR_TURN1, next: null });
    expect(ids(fork.messages)).toEqual(['s1', 'u1', 'a1', 't1', 't2', 'a2', 'u4', 'a7']);
    expect((await mirror.log(SID, { branch: 'fork-u2e' })).map((c) => c.subject)).toEqual([
      'turn 2: Now grep for FIXME',
      'turn 1: 列出 src 目录中的文件 🙂 请简短回答',
    ]);
    // Moving the DAG head switches HEAD and writes no commit.
    await dag.setHead(SID, 'a5');
    expect(await mirror.sync(SID)).toMatchObject({ head: 'fork-u2e', commitsWritten: 0 });
    expect((await mirror.branches(SID)).find((b) => b.head)!.name).toBe('fork-u2e');
  });

  withMirror('verifies the repository equal to the DAG, after every sync', async (mirror, dag) => {
    await writeGolden(dag);
    await mirror.sync(SID);
    expect(await mirror.verify(SID)).toEqual({ sessionId: SID, ok: true, differences: [] });
    await mirror.sync(SID);
    expect(await mirror.verify(SID)).toEqual({ sessionId: SID, ok: true, differences: [] });
    await dag.setHead(SID, 'a6');
    await dag.fillNode(SID, 'a6', 'Fixed all three.', { tokens: 7 });
    expect((await mirror.verify(SID)).ok).toBe(false);
    expect(await mirror.sync(SID)).toMatchObject({ commitsWritten: 1, head: 'main', branchesMoved: ['main'] });
    expect(await tips(mirror)).toEqual({ ...GOLDEN_MIRROR_TIPS, main: GOLDEN_MIRROR_FILLED_MAIN });
    expect(await mirror.verify(SID)).toEqual({ sessionId: SID, ok: true, differences: [] });
  });
}
