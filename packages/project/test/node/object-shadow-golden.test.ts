// The shadow fixture the browser runs too (shadow-fixture.ts), on the object engine over node:fs:
// the golden snapshot, tree and commit ids, diff and restore, with native git writing the same
// trees for the same files.
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { nodeCodec, nodeStorage } from '@entity-git/node-fs';
import { describe, expect, it } from 'vitest';
import { ObjectShadowProjectGit, ObjectShadowRepository } from '../../src/index.js';
import { FILES_BEFORE, type FixtureFs, runShadowFixture, SHADOW_GOLDEN, SHADOW_NOW } from '../shadow-fixture.js';
import { isolateGit, judge, nativeTree } from './judge.js';

isolateGit();

const storage = nodeStorage();

describe('the fixture the browser runs too: golden ids, equal to native git', () => {
  it('gives the golden snapshot, tree and commit ids, diff and restore, with native git writing the same trees', async () => {
    const workdir = await judge.tempDir();
    const root = join(await judge.tempDir(), 'shadow');
    const projectGit = new ObjectShadowProjectGit({ storage, codec: nodeCodec, root, now: () => SHADOW_NOW });
    const fs: FixtureFs = {
      write: (path, text) => judge.write(path, text),
      remove: (path) => fsp.rm(path),
      read: (path) => fsp.readFile(path, 'utf8').catch(() => null),
    };
    const run = await runShadowFixture(projectGit, fs, workdir);
    const gitDir = join((await ObjectShadowRepository.open({ storage, root, workdir })).dir, 'git');
    const treeOf = async (c: string) =>
      (await judge.git(workdir, `--git-dir=${gitDir}`, 'rev-parse', `${c}^{tree}`)).trim();
    const got = {
      beforeTree: await treeOf(run.files.before),
      afterTree: await treeOf(run.files.after),
      before: run.files.before,
      after: run.files.after,
      restored: run.restore.restored,
      diff: run.diff,
    };
    expect(got).toEqual(SHADOW_GOLDEN);
    // Native git writes the same trees for the same files.
    const beforeDir = await judge.tempDir();
    for (const [path, text] of Object.entries(FILES_BEFORE)) await judge.write(join(beforeDir, path), text);
    expect(await nativeTree(beforeDir)).toBe(SHADOW_GOLDEN.beforeTree);
    await judge.write(join(beforeDir, 'a.txt'), 'a1\na2\n');
    await judge.write(join(beforeDir, 'src/new.ts'), 'export const y = 2;\n');
    await fsp.rm(join(beforeDir, 'docs/readme.md'));
    expect(await nativeTree(beforeDir)).toBe(SHADOW_GOLDEN.afterTree);
    expect(await treeOf(run.restore.restored)).toBe(SHADOW_GOLDEN.beforeTree);
    expect(run.diff).toBe(
      await judge.git(
        workdir,
        `--git-dir=${gitDir}`,
        'diff',
        '--no-color',
        run.files.before,
        run.files.after,
        '--',
        'a.txt',
      ),
    );
    expect(run.files.files.map((f) => [f.path, f.status, f.by])).toEqual([
      ['a.txt', 'modified', 'tools'],
      ['docs/readme.md', 'deleted', 'other'],
      ['src/new.ts', 'added', 'other'],
    ]);
    expect(run.afterRestore).toEqual({ a: 'a1\n', readme: '# hi\n', added: null, ignored: 'ignored by .gitignore\n' });
    await judge.git(workdir, `--git-dir=${gitDir}`, 'fsck', '--strict', '--no-progress');
  });
});
