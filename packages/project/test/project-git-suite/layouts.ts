import { describe, expect, it } from 'vitest';
import { COMMITTER, type SuiteContext } from './context.js';

/** Repository layouts: subdirectories, linked worktrees, submodules, ignore rules. */
export function layoutTests(c: SuiteContext): void {
  describe('repository layouts', () => {
    submoduleTests(c);
    worktreeAndIgnoreTests(c);
  });
}

/** Submodules: the superproject’s commit keeps the gitlink; a submodule as the workdir is a repository of its own. */
function submoduleTests(c: SuiteContext): void {
  const { j, projectGit, input, untouched, expectSkip } = c;
  it('a submodule: the superproject’s own files commit and the gitlink stays; an edit inside the submodule skips', async () => {
    const dir = await withSubmodule(c);
    const gitlink = (await j.git(dir, 'ls-tree', 'HEAD', 'lib')).trim();
    const pg = projectGit();
    let snap = await pg.beforeTurn(dir);
    await j.write(`${dir}/app.txt`, 'app v2\n');
    expect(await pg.afterTurn(input(dir, ['app.txt'], snap))).toMatchObject({
      status: 'committed',
      paths: ['app.txt'],
    });
    expect((await j.git(dir, 'ls-tree', 'HEAD', 'lib')).trim()).toBe(gitlink);

    snap = await pg.beforeTurn(dir);
    await j.write(`${dir}/lib/lib.txt`, 'lib v2 by the agent\n');
    const r = await untouched(dir, () => pg.afterTurn(input(dir, ['lib/lib.txt'], snap)));
    expect(r).toMatchObject({
      status: 'skipped',
      reason: 'submodule-changes',
      warning: expect.stringContaining('lib'),
    });
  });

  it('a submodule as the workdir commits into the submodule’s own repository (and skips when its HEAD is detached)', async () => {
    const dir = await withSubmodule(c);
    const lib = `${dir}/lib`;
    const pg = projectGit();
    let snap = await pg.beforeTurn(lib);
    expect(snap.root).toBe(lib);
    await j.write(`${lib}/lib.txt`, 'lib v2\n');
    const r = await pg.afterTurn(input(lib, ['lib.txt'], snap));
    expect(r).toMatchObject({ status: 'committed', paths: ['lib.txt'] });
    expect((await j.git(lib, 'log', '-1', '--format=%cn')).trim()).toBe(COMMITTER);
    expect(await j.git(lib, 'status', '--porcelain')).toBe('');
    expect(await j.git(dir, 'status', '--porcelain')).toBe(' M lib\n');
    await j.git(lib, 'checkout', '-q', '--detach');
    snap = await pg.beforeTurn(lib);
    await j.write(`${lib}/lib.txt`, 'lib v3\n');
    expectSkip(await untouched(dir, () => pg.afterTurn(input(lib, ['lib.txt'], snap))), 'detached-head');
  });
}

/** A linked worktree, and ignore rules (`.gitignore`, nested ones, negations, `info/exclude`). */
function worktreeAndIgnoreTests(c: SuiteContext): void {
  const { j, projectGit, repo, input, porcelain } = c;
  it('a linked worktree: the commit lands on its branch, the main worktree’s HEAD and index stay', async () => {
    const dir = await repo();
    const wt = `${await j.tempDir()}/wt`;
    await j.git(dir, 'worktree', 'add', '-q', '-b', 'feature', wt);
    const mainHead = (await j.git(dir, 'rev-parse', 'HEAD')).trim();
    const mainIndex = await j.fingerprint(`${dir}/.git/index`);
    const pg = projectGit();
    const snap = await pg.beforeTurn(wt);
    expect(snap.root).toBe(wt);
    await j.write(`${wt}/feature.txt`, 'feature\n');
    const r = await pg.afterTurn(input(wt, ['feature.txt'], snap));
    expect(r).toMatchObject({ status: 'committed', branch: 'refs/heads/feature', paths: ['feature.txt'] });
    if (r.status !== 'committed') return;
    expect((await j.git(dir, 'rev-parse', 'feature')).trim()).toBe(r.commit);
    expect((await j.git(dir, 'rev-parse', 'HEAD')).trim()).toBe(mainHead);
    expect(await j.fingerprint(`${dir}/.git/index`)).toBe(mainIndex);
    expect(await j.git(wt, 'status', '--porcelain')).toBe('');
    expect(await j.git(dir, 'status', '--porcelain')).toBe('');
    expect((await j.git(wt, 'reflog', '-1', '--format=%H', 'HEAD')).trim()).toBe(r.commit);
    expect(await j.git(dir, 'fsck', '--strict')).toBe('');
  });

  it('.gitignore’d outputs are never committed and never block; negations and nested ignore files hold', async () => {
    const dir = await repo({
      '.gitignore': 'dist/\n*.log\n!keep.log\n/.env\n',
      'src/.gitignore': 'generated-*\n',
      'src/main.ts': '1\n',
    });
    await j.write(`${dir}/.git/info/exclude`, 'scratch/\n');
    await j.write(`${dir}/.env`, 'SECRET=the user’s\n');
    await j.write(`${dir}/scratch/notes.md`, 'the user’s\n');
    const pg = projectGit();
    const snap = await pg.beforeTurn(dir);
    expect(snap.dirty).toEqual([]);
    await j.write(`${dir}/src/main.ts`, '2\n');
    await j.write(`${dir}/dist/bundle.js`, 'built\n');
    await j.write(`${dir}/debug.log`, 'log\n');
    await j.write(`${dir}/keep.log`, 'kept\n');
    await j.write(`${dir}/src/generated-api.ts`, 'gen\n');
    const touched = ['src/main.ts', 'dist/bundle.js', 'debug.log', 'keep.log', 'src/generated-api.ts'];
    const r = await pg.afterTurn(input(dir, touched, snap));
    expect(r).toMatchObject({ status: 'committed', paths: ['keep.log', 'src/main.ts'] });
    expect(await j.read(`${dir}/dist/bundle.js`)).toBe('built\n');
    expect(await j.read(`${dir}/.env`)).toBe('SECRET=the user’s\n');
    expect(await porcelain(dir)).toBe('');
  });
}

/** A repository `lib` (own history, on `main`) added as a submodule of a fresh superproject. */
async function withSubmodule({ j, repo }: SuiteContext): Promise<string> {
  const lib = await repo({ 'lib.txt': 'lib v1\n' });
  const dir = await repo({ 'app.txt': 'app\n' });
  await j.git(dir, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'lib');
  await j.git(dir, 'commit', '-q', '-m', 'add lib');
  return dir;
}
