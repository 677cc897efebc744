// Shadow mode of the object engine in Chromium, on lightning-fs (IndexedDB): the fixture Node runs
// in packages/project/test/node/object-shadow-golden.test.ts gives the very same snapshot, tree and commit
// ids, the same diff and the same restore here.
import { ObjectShadowProjectGit, ObjectShadowRepository } from '@entity-git/project';
import { describe, expect, it } from 'vitest';
import { type FixtureFs, runShadowFixture, SHADOW_GOLDEN, SHADOW_NOW } from '../../project/test/shadow-fixture.js';
import { freshStorage } from './helpers.js';

describe('shadow mode in the browser (object engine on lightning-fs)', () => {
  it('snapshots, diffs and restores with the same ids as in Node', async () => {
    const storage = freshStorage();
    const { fs } = storage;
    const mkdirs = async (path: string) => {
      let at = '';
      for (const part of path.split('/').slice(1, -1)) {
        at += `/${part}`;
        await fs.mkdir(at).catch(() => undefined);
      }
    };
    const files: FixtureFs = {
      write: async (path, text) => {
        await mkdirs(path);
        await fs.writeFile(path, text);
      },
      remove: (path) => fs.unlink(path),
      read: async (path) => (await fs.readFile(path, 'utf8').catch(() => null)) as string | null,
    };
    await mkdirs('/work/project/x');
    const projectGit = new ObjectShadowProjectGit({ storage, root: '/entity-git/shadow', now: () => SHADOW_NOW });
    const run = await runShadowFixture(projectGit, files, '/work/project');
    expect(run.files.before).toBe(SHADOW_GOLDEN.before);
    expect(run.files.after).toBe(SHADOW_GOLDEN.after);
    expect(run.restore.restored).toBe(SHADOW_GOLDEN.restored);
    expect(run.diff).toBe(SHADOW_GOLDEN.diff);
    const repo = await ObjectShadowRepository.open({ storage, root: '/entity-git/shadow', workdir: '/work/project' });
    expect((await repo.commit(run.files.before)).tree).toBe(SHADOW_GOLDEN.beforeTree);
    expect((await repo.commit(run.files.after)).tree).toBe(SHADOW_GOLDEN.afterTree);
    expect((await repo.commit(run.restore.restored)).tree).toBe(SHADOW_GOLDEN.beforeTree);
    expect(run.files.files.map((f) => [f.path, f.status, f.added, f.removed, f.by])).toEqual([
      ['a.txt', 'modified', 1, 0, 'tools'],
      ['docs/readme.md', 'deleted', 0, 1, 'other'],
      ['src/new.ts', 'added', 1, 0, 'other'],
    ]);
    expect(run.restore.paths).toEqual(['a.txt', 'docs/readme.md', 'src/new.ts']);
    expect(run.afterRestore).toEqual({ a: 'a1\n', readme: '# hi\n', added: null, ignored: 'ignored by .gitignore\n' });
    // Nothing of entity-git's in the workdir: the shadow repository lives under its own root.
    expect((await fs.readdir('/work/project')).sort()).toEqual(['.gitignore', 'a.txt', 'dist', 'docs', 'src']);
    const undone = await projectGit.undoRestore({ workdir: '/work/project', restored: run.restore.restored });
    expect(undone.paths).toEqual(['a.txt', 'docs/readme.md', 'src/new.ts']);
    expect(await files.read('/work/project/src/new.ts')).toBe('export const y = 2;\n');
    await storage.close();
  });
});
