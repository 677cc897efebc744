import { MemoryDag, reconcile, type Difference } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from './helpers.js';

const SID = GOLDEN_SESSION.id;
// Fixed by the golden DAG (golden.test.ts). Every branch has 2 turns; HEAD is fork-u4.
const GOLDEN_TIPS: Record<string, string> = {
  main: '2d6739e6531c79338d437bcd12e6a1911db229f3',
  'retry-a4r': 'd080c326d39a5951408d85b37d2ad5734ef66218',
  'fork-u2e': '91b1853f7d112a2d1c527c327cbb1fe5c82401c6',
  'fork-u4': '17a4c695c75333ca3ac7710e31cd26d953bab6d6',
};
// The last node of each branch's turn 2.
const TURN2_NODE: Record<string, string> = { main: 'a4', 'retry-a4r': 'a4r', 'fork-u2e': 'a5', 'fork-u4': 'a7' };

const tipsOf = (dir: string) =>
  Object.fromEntries(
    git(dir, 'for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads')
      .trim()
      .split('\n')
      .map((l) => l.split(' ')),
  );
const count = (dir: string, ref: string) => Number(git(dir, 'rev-list', '--count', ref).trim());

async function goldenRepo() {
  const dag = new MemoryDag();
  await writeGolden(dag);
  const mirror = createNodeMirror({ dag, root: tempDir('eg-verify-') });
  await mirror.sync(SID);
  const dir = mirror.repoPath(SID);
  expect(tipsOf(dir)).toEqual(GOLDEN_TIPS);
  expect((await mirror.verify(SID)).ok).toBe(true);
  return { dag, mirror, dir };
}

describe('verify compares branches by node ids and trailers, not by counts', () => {
  it.each([
    // [branch moved, branch whose commit it is moved to]
    ['retry-a4r', 'main'],
    ['main', 'fork-u2e'],
    ['fork-u2e', 'retry-a4r'],
  ])(
    '%s moved to the commit of %s (same number of turns): branch-differs, then reconcile restores the golden ids',
    async (moved, onto) => {
      const { dag, mirror, dir } = await goldenRepo();
      git(dir, 'update-ref', `refs/heads/${moved}`, GOLDEN_TIPS[onto]!, GOLDEN_TIPS[moved]!);
      // Counting commits cannot see it: the moved branch has as many commits as before.
      expect(count(dir, moved)).toBe(2);
      expect(git(dir, 'rev-parse', moved).trim()).toBe(GOLDEN_TIPS[onto]);

      const report = await mirror.verify(SID);
      expect(report.ok).toBe(false);
      expect(report.differences).toEqual([
        expect.objectContaining<Partial<Difference>>({
          kind: 'branch-differs',
          branch: moved,
          expected: `turn 2 ending at ${TURN2_NODE[moved]}`,
          actual: `turn 2 ending at ${TURN2_NODE[onto]}`,
        }),
      ]);
      // verify writes nothing.
      expect(git(dir, 'rev-parse', moved).trim()).toBe(GOLDEN_TIPS[onto]);

      const result = await reconcile({ dag, mirror, sessions: [SID] });
      expect(result.ok).toBe(true);
      expect(result.entries).toEqual([
        expect.objectContaining({
          sessionId: SID,
          action: 'repaired',
          differences: [expect.objectContaining({ kind: 'branch-differs', branch: moved })],
        }),
      ]);
      expect(tipsOf(dir)).toEqual(GOLDEN_TIPS);
      expect(git(dir, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/fork-u4');
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(dir, 'status', '--porcelain')).toBe('');
      expect(await mirror.verify(SID)).toEqual({ sessionId: SID, ok: true, differences: [] });
      // Idempotent: a second reconcile finds nothing to do.
      expect((await reconcile({ dag, mirror, sessions: [SID] })).entries).toEqual([
        expect.objectContaining({ action: 'unchanged' }),
      ]);
    },
  );

  it("HEAD's branch moved to another branch's commit of equal turns: reported and repaired, working tree included", async () => {
    const { dag, mirror, dir } = await goldenRepo();
    git(dir, 'update-ref', 'refs/heads/fork-u4', GOLDEN_TIPS.main!);
    expect(count(dir, 'fork-u4')).toBe(2);

    const report = await mirror.verify(SID);
    expect(report.ok).toBe(false);
    expect(report.differences).toContainEqual(
      expect.objectContaining({
        kind: 'branch-differs',
        branch: 'fork-u4',
        expected: 'turn 2 ending at a7',
        actual: 'turn 2 ending at a4',
      }),
    );
    expect(report.differences.filter((d) => d.kind === 'branch-differs').map((d) => d.branch)).toEqual(['fork-u4']);

    expect((await reconcile({ dag, mirror, sessions: [SID] })).ok).toBe(true);
    expect(tipsOf(dir)).toEqual(GOLDEN_TIPS);
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect((await mirror.verify(SID)).ok).toBe(true);
  });
});
