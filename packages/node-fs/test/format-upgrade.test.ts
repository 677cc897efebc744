import { canonicalJson, type EntityGitError, FORMAT_1_BACKUP, MemoryDag, META_REF } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from './helpers.js';

const SID = GOLDEN_SESSION.id;
// The golden tips in format 2 (golden.test.ts) and, below, in format 1: the ids entity-git wrote
// before issue 19, when every commit's meta.json held the session row.
const GOLDEN_TIPS = {
  'fork-u2e': '91b1853f7d112a2d1c527c327cbb1fe5c82401c6',
  'fork-u4': '17a4c695c75333ca3ac7710e31cd26d953bab6d6',
  main: '2d6739e6531c79338d437bcd12e6a1911db229f3',
  'retry-a4r': 'd080c326d39a5951408d85b37d2ad5734ef66218',
};
const FORMAT_1_TIPS = {
  'fork-u2e': 'b2dca18d5f402c26feb464e0d55f787e1d02a336',
  'fork-u4': '899927d124c8ca17e4c1d49a2105c3a1685bfdb0',
  main: '9a7f4a180ae6d1b1e2260d527ed1c75b2947f99a',
  'retry-a4r': 'de0817b81e932a4d392ac0896ba36429b1074a58',
};

const tipsOf = (dir: string, prefix = 'refs/heads') =>
  Object.fromEntries(
    git(dir, 'for-each-ref', '--format=%(refname) %(objectname)', prefix)
      .trim()
      .split('\n')
      .map((l) => l.split(' '))
      .map(([r, o]) => [r!.slice(prefix.length + 1), o]),
  );

/**
 * A repository exactly as entity-git wrote it in format 1: the golden session's history with the
 * whole row (less head) in every meta.json, rewritten by native git, and no format in its config.
 */
async function format1Repo() {
  const dag = new MemoryDag();
  await writeGolden(dag);
  const root = tempDir();
  await createNodeMirror({ dag, root }).sync(SID);
  const dir = join(root, SID);
  const { head: _head, ...row } = GOLDEN_SESSION;
  const meta = join(tempDir(), 'meta.json');
  writeFileSync(meta, canonicalJson(row));
  git(dir, 'update-ref', '-d', META_REF);
  git(
    dir,
    '-c',
    'advice.filterBranch=false',
    'filter-branch',
    '-f',
    '--tree-filter',
    `cp ${meta} meta.json`,
    '--',
    '--branches',
  );
  for (const ref of git(dir, 'for-each-ref', '--format=%(refname)', 'refs/original').trim().split('\n'))
    git(dir, 'update-ref', '-d', ref);
  git(dir, 'config', '--unset', 'entitygit.format');
  rmSync(join(dir, '.git', 'entity-git-state.json'), { force: true }); // the mirror's cache, forgotten
  git(dir, 'reset', '-q', '--hard');
  return { dag, root, dir };
}

describe('a repository written in format 1 (meta.json held the mutable row)', () => {
  it('is refused by sync and reported by verify; a full sync rebuilds it to the format-2 ids, keeping the old tips; a rebuild cut short is finished by the next', async () => {
    const { dag, root, dir } = await format1Repo();
    expect(tipsOf(dir)).toEqual(FORMAT_1_TIPS);
    const mirror = createNodeMirror({ dag, root });
    const refused = await mirror.sync(SID).then(
      () => null,
      (e: unknown) => e as EntityGitError,
    );
    expect(refused?.code).toBe('REPO_FORMAT_OLD');
    expect(tipsOf(dir)).toEqual(FORMAT_1_TIPS); // nothing moved
    const report = await mirror.verify(SID);
    expect(report.ok).toBe(false);
    expect(report.differences.map((d) => d.kind)).toContain('format-old');

    await mirror.sync(SID, { full: true });
    expect(tipsOf(dir)).toEqual(GOLDEN_TIPS);
    expect(tipsOf(dir, FORMAT_1_BACKUP.replace(/\/$/, ''))).toEqual(FORMAT_1_TIPS);
    expect(git(dir, 'config', 'entitygit.format').trim()).toBe('2');
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(await mirror.verify(SID)).toMatchObject({ ok: true, differences: [] });

    // A rebuild a crash cut short: one branch still at its format-1 tip, the format not recorded yet.
    git(dir, 'update-ref', 'refs/heads/retry-a4r', FORMAT_1_TIPS['retry-a4r']);
    git(dir, 'config', '--unset', 'entitygit.format');
    const fresh = createNodeMirror({ dag, root });
    expect(
      (
        await fresh.sync(SID).then(
          () => null,
          (e: unknown) => e as EntityGitError,
        )
      )?.code,
    ).toBe('REPO_FORMAT_OLD');
    await fresh.sync(SID, { full: true });
    expect(tipsOf(dir)).toEqual(GOLDEN_TIPS);
    expect(tipsOf(dir, FORMAT_1_BACKUP.replace(/\/$/, ''))).toEqual(FORMAT_1_TIPS);
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect((await fresh.sync(SID)).noop).toBe(true);
  });

  it('a repository without a recorded format whose trees are format 2 (a clone) is recorded as format 2 and synced', async () => {
    const dag = new MemoryDag();
    await writeGolden(dag);
    const root = tempDir();
    await createNodeMirror({ dag, root }).sync(SID);
    const dir = join(root, SID);
    git(dir, 'config', '--unset', 'entitygit.format');
    const mirror = createNodeMirror({ dag, root });
    expect((await mirror.sync(SID)).commitsWritten).toBe(0);
    expect(git(dir, 'config', 'entitygit.format').trim()).toBe('2');
    expect(tipsOf(dir)).toEqual(GOLDEN_TIPS);
  });
});
