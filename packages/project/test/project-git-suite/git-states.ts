import { describe, expect, it } from 'vitest';
import type { SuiteContext } from './context.js';

/** States git is in (merge, rebase, detached HEAD, locks…): skip and warn, touching nothing. */
export function gitStateTests(c: SuiteContext): void {
  describe('states git is in: skip and warn, touching nothing', () => {
    inProgressTests(c);
    headAndPlaceTests(c);
  });
}

/** The helpers of these tests: an agent's turn that must skip for `reason`, and two branches that conflict. */
function skipHelpers(c: SuiteContext) {
  const { j, projectGit, repo, input, untouched, expectSkip } = c;
  const agentTurn = async (dir: string, reason: string) => {
    const pg = projectGit();
    const snap = await pg.beforeTurn(dir);
    await j.write(`${dir}/agent.txt`, 'agent\n');
    const r = await untouched(dir, () => pg.afterTurn(input(dir, ['agent.txt'], snap)));
    expectSkip(r, reason);
    return r;
  };
  /** `main` and `other` both change `x.txt`, so merging, rebasing or picking one onto the other conflicts. */
  const diverged = async () => {
    const dir = await repo({ 'x.txt': 'base\n' });
    await j.git(dir, 'checkout', '-q', '-b', 'other');
    await j.write(`${dir}/x.txt`, 'other\n');
    await j.git(dir, 'commit', '-q', '-am', 'other');
    await j.git(dir, 'checkout', '-q', 'main');
    await j.write(`${dir}/x.txt`, 'main\n');
    await j.git(dir, 'commit', '-q', '-am', 'main');
    return dir;
  };
  return { agentTurn, diverged };
}

/** An operation in progress: merge, rebase, cherry-pick, revert, bisect. */
function inProgressTests(c: SuiteContext): void {
  const { j, repo } = c;
  const { agentTurn, diverged } = skipHelpers(c);
  it('mid-merge (conflicted, and clean with --no-commit)', async () => {
    const dir = await diverged();
    expect(await j.gitCode(dir, 'merge', 'other')).not.toBe(0);
    const r = await agentTurn(dir, 'merge-in-progress');
    expect(r).toMatchObject({ warning: expect.stringContaining('merge') });
    const clean = await repo();
    await j.git(clean, 'checkout', '-q', '-b', 'side');
    await j.write(`${clean}/side.txt`, 's\n');
    await j.git(clean, 'add', '-A');
    await j.git(clean, 'commit', '-q', '-m', 'side');
    await j.git(clean, 'checkout', '-q', 'main');
    await j.git(clean, 'merge', '--no-commit', '--no-ff', 'side');
    await agentTurn(clean, 'merge-in-progress');
  });

  it('mid-rebase', async () => {
    const dir = await diverged();
    expect(await j.gitCode(dir, 'rebase', 'other')).not.toBe(0);
    await agentTurn(dir, 'rebase-in-progress');
  });

  it('mid-cherry-pick, mid-revert, mid-bisect', async () => {
    const pick = await diverged();
    expect(await j.gitCode(pick, 'cherry-pick', 'other')).not.toBe(0);
    await agentTurn(pick, 'cherry-pick-in-progress');
    const rev = await repo({ 'x.txt': '1\n' });
    await j.write(`${rev}/x.txt`, '2\n');
    await j.git(rev, 'commit', '-q', '-am', 'two');
    await j.write(`${rev}/x.txt`, '3\n');
    await j.git(rev, 'commit', '-q', '-am', 'three');
    expect(await j.gitCode(rev, 'revert', '--no-edit', 'HEAD~1')).not.toBe(0);
    await agentTurn(rev, 'revert-in-progress');
    const bis = await repo();
    await j.git(bis, 'bisect', 'start');
    await agentTurn(bis, 'bisect-in-progress');
  });
}

/** A detached HEAD, a bare repository, a workdir that is a file or missing. */
function headAndPlaceTests(c: SuiteContext): void {
  const { j, projectGit, repo, input, untouched } = c;
  const { agentTurn } = skipHelpers(c);
  it('detached HEAD', async () => {
    const dir = await repo();
    await j.git(dir, 'checkout', '-q', '--detach');
    await agentTurn(dir, 'detached-head');
  });

  it('a bare repository, and a workdir inside a git directory', async () => {
    const bare = await j.tempDir();
    await j.git(bare, 'init', '-q', '--bare');
    const pg = projectGit();
    expect(await untouched(bare, () => pg.afterTurn(input(bare, ['x.txt'], null)))).toMatchObject({
      status: 'skipped',
      reason: 'bare-repository',
    });
    const dir = await repo();
    expect(await untouched(dir, () => pg.afterTurn(input(`${dir}/.git`, ['x.txt'], null)))).toMatchObject({
      status: 'skipped',
      reason: 'bare-repository',
    });
  });

  it('a workdir that is a file, and one that is missing: nothing is created', async () => {
    const dir = await j.tempDir();
    await j.write(`${dir}/file`, 'x\n');
    const pg = projectGit();
    expect(await pg.beforeTurn(`${dir}/file`)).toMatchObject({ state: 'not-a-directory' });
    expect(await untouched(dir, () => pg.afterTurn(input(`${dir}/file`, ['a.txt'], null)))).toMatchObject({
      status: 'skipped',
      reason: 'workdir-not-a-directory',
    });
    expect(await untouched(dir, () => pg.afterTurn(input(`${dir}/missing/deeper`, ['a.txt'], null)))).toMatchObject({
      status: 'skipped',
      reason: 'workdir-missing',
    });
    expect(await j.exists(`${dir}/missing`)).toBe(false);
  });
}
