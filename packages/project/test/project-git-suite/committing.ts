import { UNCOMMITTED_CHANGES_WARNING } from '@entity-git/project';
import { describe, expect, it } from 'vitest';
import { SESSION_COMMIT, COMMITTER, EMAIL, type SuiteContext } from './context.js';

/** Committing the agent’s edits: exactly its paths, committer, message and trailers. */
export function committingTests(c: SuiteContext): void {
  describe('committing the agent’s edits', () => {
    exactCommitTests(c);
    fileKindTests(c);
    unbornTests(c);
    noRepositoryTests(c);
    pathTests(c);
    duringTurnTests(c);
  });
}

/** The commit itself: exactly the agent’s paths, its committer, message, trailers and id, judged by native git. */
function exactCommitTests(c: SuiteContext): void {
  const { j, projectGit, repo, input, names, porcelain } = c;
  it('clean tree + agent edits → one commit of exactly those paths, committer, message and trailers', async () => {
    const dir = await repo({
      'README.md': '# project\n',
      'src/main.ts': 'export const x = 1;\n',
      'old.txt': 'to be removed\n',
    });
    const pg = projectGit();
    const snap = await pg.beforeTurn(dir);
    expect(snap).toMatchObject({ version: 1, state: 'repository', dirty: [], root: dir });
    await j.write(`${dir}/src/main.ts`, 'export const x = 2;\n');
    await j.write(`${dir}/src/new/parser.ts`, 'export function parse() {}\n');
    await j.remove(`${dir}/old.txt`);
    const parent = (await j.git(dir, 'rev-parse', 'HEAD')).trim();

    const r = await pg.afterTurn(input(dir, ['src/main.ts', `${dir}/src/new/parser.ts`, 'old.txt'], snap));
    expect(r).toMatchObject({
      status: 'committed',
      branch: 'refs/heads/main',
      sessionId: 'sess-1',
      turn: 7,
      paths: ['old.txt', 'src/main.ts', 'src/new/parser.ts'],
      deferred: [],
      ignoredPaths: [],
    });
    if (r.status !== 'committed') return;
    expect((await j.git(dir, 'rev-parse', 'HEAD')).trim()).toBe(r.commit);
    expect(await names(dir)).toEqual(['old.txt', 'src/main.ts', 'src/new/parser.ts']);
    expect((await j.git(dir, 'log', '-1', '--format=%cn|%ce|%an|%ae|%at|%ct|%P')).trim()).toBe(
      `${COMMITTER}|${EMAIL}|${COMMITTER}|${EMAIL}|1700000100|1700000100|${parent}`,
    );
    expect(await j.git(dir, 'log', '-1', '--format=%B')).toBe(
      '[agent sess-1] turn 7: Fix the parser: it drops the last token when a line ends in\n\nSession: sess-1\nTurn: 7\nSession-Commit: c0ffee0000000000000000000000000000000001\n\n',
    );
    expect((await j.git(dir, 'log', '-1', '--format=%(trailers:key=Session-Commit,valueonly)')).trim()).toBe(
      SESSION_COMMIT,
    );
    // Deterministic: the same inputs give the same commit id on every engine.
    expect(r.commit).toBe('a7b1d17cb2ccabf6c74ad90cf8cce1c7d7b70104');
    // Plumbing first: `git status` would refresh the index itself and hide missing stat data.
    expect(await j.gitCode(dir, 'diff-files', '--quiet')).toBe(0);
    expect(await j.gitCode(dir, 'diff-index', '--cached', '--quiet', 'HEAD')).toBe(0);
    expect(await porcelain(dir)).toBe('');
    expect(await j.git(dir, 'fsck', '--strict')).toBe('');
    expect((await j.git(dir, 'reflog', '-1', '--format=%gs', 'main')).trim()).toBe(
      'commit: [agent sess-1] turn 7: Fix the parser: it drops the last token when a line ends in',
    );
    expect((await j.git(dir, 'reflog', '-1', '--format=%H', 'HEAD')).trim()).toBe(r.commit);
  });
}

/** Staged and unstaged edits, modes and symlinks, and a repository’s hooks and signing config. */
function fileKindTests(c: SuiteContext): void {
  const { j, projectGit, repo, input, porcelain } = c;
  it('commits what is staged and unstaged on the agent’s paths, an executable bit and a symlink, and leaves other files alone', async () => {
    const dir = await repo();
    const pg = projectGit();
    const snap = await pg.beforeTurn(dir);
    await j.write(`${dir}/bin/run.sh`, '#!/bin/sh\necho hi\n');
    await j.chmod(`${dir}/bin/run.sh`, 0o755);
    // Executable by its group alone: git records a file's mode from its owner's bit only.
    await j.write(`${dir}/bin/tool`, 'data\n');
    await j.chmod(`${dir}/bin/tool`, 0o654);
    await j.symlink('src/main.ts', `${dir}/link`);
    await j.write(`${dir}/README.md`, '# staged by the agent\n');
    await j.git(dir, 'add', 'README.md');
    await j.write(`${dir}/README.md`, '# then edited again\n');
    const r = await pg.afterTurn(input(dir, ['bin/run.sh', 'bin/tool', 'link', 'README.md'], snap));
    expect(r).toMatchObject({ status: 'committed', paths: ['README.md', 'bin/run.sh', 'bin/tool', 'link'] });
    expect(
      (await j.git(dir, 'ls-tree', '-r', 'HEAD'))
        .split('\n')
        .filter(Boolean)
        .map((l) => `${l.split(/\s+/).slice(0, 2).join(' ')} ${l.split('\t')[1]}`),
    ).toEqual([
      '100644 blob README.md',
      '100755 blob bin/run.sh',
      '100644 blob bin/tool',
      '120000 blob link',
      '100644 blob src/main.ts',
    ]);
    expect(await j.git(dir, 'show', 'HEAD:README.md')).toBe('# then edited again\n');
    expect(await j.git(dir, 'show', 'HEAD:link')).toBe('src/main.ts');
    expect(await porcelain(dir)).toBe('');
  });

  it('runs no hook and signs nothing, whatever the repository configures', async () => {
    const dir = await repo();
    for (const hook of ['pre-commit', 'commit-msg', 'prepare-commit-msg', 'post-commit', 'reference-transaction']) {
      await j.write(`${dir}/.git/hooks/${hook}`, `#!/bin/sh\ntouch "${dir}/.git/ran-${hook}"\nexit 1\n`);
      await j.chmod(`${dir}/.git/hooks/${hook}`, 0o755);
    }
    await j.git(dir, 'config', 'commit.gpgsign', 'true');
    await j.git(dir, 'config', 'gpg.program', '/bin/false');
    const pg = projectGit();
    const snap = await pg.beforeTurn(dir);
    await j.write(`${dir}/a.txt`, 'agent\n');
    expect(await pg.afterTurn(input(dir, ['a.txt'], snap))).toMatchObject({
      status: 'committed',
      paths: ['a.txt'],
    });
    for (const hook of ['pre-commit', 'commit-msg', 'prepare-commit-msg', 'post-commit', 'reference-transaction'])
      expect(await j.exists(`${dir}/.git/ran-${hook}`)).toBe(false);
    expect(await j.git(dir, 'cat-file', 'commit', 'HEAD')).not.toContain('gpgsig');
  });
}

/** A repository without a commit yet. */
function unbornTests(c: SuiteContext): void {
  const { j, projectGit, input, count, porcelain, untouched } = c;
  it('makes the first commit of an unborn branch', async () => {
    const dir = await j.tempDir();
    await j.git(dir, 'init', '-q', '-b', 'trunk');
    const pg = projectGit();
    const snap = await pg.beforeTurn(dir);
    expect(snap).toMatchObject({ state: 'repository', head: null, dirty: [] });
    await j.write(`${dir}/hello.py`, 'print("hi")\n');
    const r = await pg.afterTurn(
      input(dir, ['hello.py'], snap, { turn: 1, userMessage: 'write hello', sessionCommit: null }),
    );
    expect(r).toMatchObject({ status: 'committed', branch: 'refs/heads/trunk', paths: ['hello.py'] });
    expect(await count(dir)).toBe(1);
    expect((await j.git(dir, 'log', '-1', '--format=%P|%s')).trim()).toBe('|[agent sess-1] turn 1: write hello');
    expect(await j.git(dir, 'log', '-1', '--format=%B')).not.toContain('Session-Commit');
    expect(await porcelain(dir)).toBe('');
    expect(await j.git(dir, 'fsck', '--strict')).toBe('');
  });

  it('skips an unborn repository that holds the user’s untracked files', async () => {
    const dir = await j.tempDir();
    await j.git(dir, 'init', '-q', '-b', 'main');
    await j.write(`${dir}/notes.md`, 'mine\n');
    const pg = projectGit();
    const snap = await pg.beforeTurn(dir);
    await j.write(`${dir}/hello.py`, 'print("hi")\n');
    const r = await untouched(dir, () => pg.afterTurn(input(dir, ['hello.py'], snap)));
    expect(r).toMatchObject({
      status: 'skipped',
      reason: 'uncommitted-changes',
      warning: UNCOMMITTED_CHANGES_WARNING,
      userPaths: ['notes.md'],
      agentPaths: ['hello.py'],
    });
  });
}

/** A workdir that is no repository yet. */
function noRepositoryTests(c: SuiteContext): void {
  const { j, projectGit, input, count, porcelain } = c;
  it('turns a directory that is no repository into one, then commits (only when the agent edited something)', async () => {
    const dir = await j.tempDir();
    const pg = projectGit();
    const idle = await pg.beforeTurn(dir);
    expect(idle).toMatchObject({ state: 'not-a-repository', root: null, dirty: [] });
    expect(await pg.afterTurn(input(dir, [], idle))).toMatchObject({
      status: 'skipped',
      reason: 'nothing-to-commit',
      warning: null,
    });
    expect(await j.exists(`${dir}/.git`)).toBe(false);

    const snap = await pg.beforeTurn(dir);
    await j.write(`${dir}/app/index.js`, 'console.log(1)\n');
    const r = await pg.afterTurn(input(dir, ['app/index.js'], snap, { turn: 1 }));
    expect(r).toMatchObject({ status: 'committed', branch: 'refs/heads/main', paths: ['app/index.js'] });
    expect((await j.git(dir, 'rev-parse', '--abbrev-ref', 'HEAD')).trim()).toBe('main');
    expect(await count(dir)).toBe(1);
    expect(await porcelain(dir)).toBe('');
    expect(await j.git(dir, 'fsck', '--strict')).toBe('');
  });

  it('inits a directory holding the user’s files but commits none of them (even one the agent edited)', async () => {
    const dir = await j.tempDir();
    await j.write(`${dir}/notes.txt`, 'the user wrote this\n');
    const pg = projectGit();
    const snap = await pg.beforeTurn(dir);
    expect(snap).toMatchObject({ state: 'not-a-repository', dirty: ['notes.txt'] });
    await j.write(`${dir}/notes.txt`, 'the user wrote this\nand the agent this\n');
    const r = await pg.afterTurn(input(dir, ['notes.txt'], snap));
    expect(r).toMatchObject({
      status: 'skipped',
      reason: 'uncommitted-changes',
      warning: UNCOMMITTED_CHANGES_WARNING,
      userPaths: ['notes.txt'],
      agentPaths: [],
    });
    expect(await j.gitCode(dir, 'rev-parse', '-q', '--verify', 'HEAD')).not.toBe(0);
    expect(await j.read(`${dir}/notes.txt`)).toBe('the user wrote this\nand the agent this\n');
  });
}

/** How touched paths are read: relative to a workdir below the root, and names git would quote or glob. */
function pathTests(c: SuiteContext): void {
  const { j, projectGit, repo, input, porcelain } = c;
  it('takes absolute and relative paths below a workdir that is a subdirectory of the repository', async () => {
    const dir = await repo({ 'pkg/a/index.ts': '1\n', 'other/x.ts': '1\n' });
    const workdir = `${dir}/pkg/a`;
    const pg = projectGit();
    const snap = await pg.beforeTurn(workdir);
    expect(snap.root).toBe(dir);
    await j.write(`${workdir}/index.ts`, '2\n');
    await j.write(`${workdir}/lib/util.ts`, 'u\n');
    await j.write(`${dir}/other/x.ts`, '2\n');
    const r = await pg.afterTurn(
      input(
        workdir,
        ['index.ts', `${workdir}/lib/util.ts`, '../../other/x.ts', '/definitely/elsewhere.txt', '../../../outside.txt'],
        snap,
      ),
    );
    expect(r).toMatchObject({
      status: 'committed',
      paths: ['other/x.ts', 'pkg/a/index.ts', 'pkg/a/lib/util.ts'],
      ignoredPaths: ['/definitely/elsewhere.txt', '../../../outside.txt'],
    });
  });

  it('names git would quote or glob are committed exactly (spaces, newlines, globs, quotes, a leading dash, non-ASCII)', async () => {
    const dir = await repo();
    const pg = projectGit();
    const snap = await pg.beforeTurn(dir);
    const weird = [
      'with space.txt',
      'new\nline.txt',
      '*.ts',
      '[ab].md',
      '"quoted"',
      '-dash',
      'ünïcødé/😀.txt',
      'back\\slash',
      'tab\there',
    ];
    for (const p of weird) await j.write(`${dir}/${p}`, `${p}\n`);
    const r = await pg.afterTurn(input(dir, weird, snap));
    expect(r).toMatchObject({ status: 'committed', paths: [...weird].sort() });
    const listed = (await j.git(dir, 'show', '--name-only', '-z', '--format=', 'HEAD'))
      .split('\0')
      .filter(Boolean)
      .sort();
    expect(listed).toEqual([...weird].sort());
    for (const p of weird) expect(await j.git(dir, 'show', `HEAD:${p}`)).toBe(`${p}\n`);
    expect(await porcelain(dir)).toBe('');
  });
}

/** What happened in the repository during the turn: a user’s commit, a write that changed nothing. */
function duringTurnTests(c: SuiteContext): void {
  const { j, projectGit, repo, input, names, untouched } = c;
  it('lands on top of a commit the user made during the turn', async () => {
    const dir = await repo();
    const pg = projectGit();
    const snap = await pg.beforeTurn(dir);
    await j.write(`${dir}/agent.txt`, 'agent\n');
    await j.write(`${dir}/user.txt`, 'user\n');
    await j.git(dir, 'add', 'user.txt');
    await j.git(dir, 'commit', '-q', '-m', 'the user commits mid-turn');
    const userCommit = (await j.git(dir, 'rev-parse', 'HEAD')).trim();
    const r = await pg.afterTurn(input(dir, ['agent.txt'], snap));
    expect(r).toMatchObject({ status: 'committed', paths: ['agent.txt'] });
    expect((await j.git(dir, 'log', '-1', '--format=%P')).trim()).toBe(userCommit);
    expect(await names(dir)).toEqual(['agent.txt']);
  });

  it('treats a touched path whose content did not change as nothing to commit', async () => {
    const dir = await repo();
    const pg = projectGit();
    const snap = await pg.beforeTurn(dir);
    await j.write(`${dir}/README.md`, '# project\n');
    const r = await untouched(dir, () => pg.afterTurn(input(dir, ['README.md'], snap)));
    expect(r).toMatchObject({ status: 'skipped', reason: 'nothing-to-commit', warning: null });
  });
}
