import {
  UNCOMMITTED_CHANGES_WARNING,
  createProjectGit,
  gitBlobId,
  type AfterTurnInput,
  type AfterTurnResult,
  type ProjectGit,
  type ProjectGitEngine,
  type ProjectGitOptions,
  type ProjectLock,
  type ProjectSnapshot,
} from '@entity-git/core';
import { describe, expect, it } from 'vitest';

/**
 * What the suite needs of the platform to set up real repositories and judge them with native git
 * (the suite itself has no file system or process access, so it runs wherever an adapter can
 * supply these).
 */
export interface ProjectGitJudge {
  /** A fresh, empty directory, as an absolute real path (no symlink in it). */
  tempDir(): Promise<string>;
  /**
   * Run native git in `cwd` as the user would — identity `User <user@example.com>`, no signing,
   * fixed dates (`GIT_AUTHOR_DATE`/`GIT_COMMITTER_DATE` = 1700000000) — and resolve its stdout;
   * reject on a non-zero exit.
   */
  git(cwd: string, ...args: string[]): Promise<string>;
  /** Like {@link git}, resolving the exit code instead of rejecting. */
  gitCode(cwd: string, ...args: string[]): Promise<number>;
  /** Write a file, creating its parents. */
  write(path: string, data: string): Promise<void>;
  read(path: string): Promise<string | null>;
  /** Remove a file or a directory tree. */
  remove(path: string): Promise<void>;
  exists(path: string): Promise<boolean>;
  chmod(path: string, mode: number): Promise<void>;
  symlink(target: string, path: string): Promise<void>;
  /**
   * A digest of everything under `dir`, `.git` included: each path with its type, mode, size,
   * content hash and mtime. Equal digests: nothing was written, renamed or touched.
   */
  fingerprint(dir: string): Promise<string>;
}

export interface ProjectGitSuiteOptions {
  /** Shown in the suite's title. */
  name: string;
  engine: ProjectGitEngine;
  judge: ProjectGitJudge;
  /** The cross-process lock the platform provides (default: core's in-process one). */
  lock?: ProjectLock;
}

const SESSION_COMMIT = 'c0ffee0000000000000000000000000000000001';
const NOW = 1_700_000_100_000;
const COMMITTER = 'agent (claude-sonnet-4.7 via OpenProgram)';
const EMAIL = 'agent@openprogram.invalid';
const LONG_MESSAGE =
  '  Fix the\tparser:\n\n  it drops   the last token when a line ends in a comment, and more words after sixty';

/**
 * The project auto-commit conformance suite (DESIGN.md §4, issue 5), the same for every engine:
 * real repositories made and judged by native git.
 */
export function testProjectGit(options: ProjectGitSuiteOptions): void {
  const { engine, judge: j } = options;

  const projectGit = (extra: Partial<ProjectGitOptions> = {}): ProjectGit =>
    createProjectGit({
      engine,
      ...(options.lock ? { lock: options.lock } : {}),
      initialBranch: 'main',
      now: () => NOW,
      ...extra,
    });

  /** A repository on `main` with `files` committed by the user (fixed dates: the same ids every run). */
  async function repo(
    files: Record<string, string> = { 'README.md': '# project\n', 'src/main.ts': 'export const x = 1;\n' },
  ): Promise<string> {
    const dir = await j.tempDir();
    await j.git(dir, 'init', '-q', '-b', 'main');
    for (const [p, c] of Object.entries(files)) await j.write(`${dir}/${p}`, c);
    await j.git(dir, 'add', '-A');
    await j.git(dir, 'commit', '-q', '-m', 'initial');
    return dir;
  }

  const input = (
    workdir: string,
    touchedPaths: string[],
    snapshot: ProjectSnapshot | null,
    extra: Partial<AfterTurnInput> = {},
  ): AfterTurnInput => ({
    workdir,
    sessionId: 'sess-1',
    turn: 7,
    userMessage: LONG_MESSAGE,
    model: 'claude-sonnet-4.7',
    sessionCommit: SESSION_COMMIT,
    touchedPaths,
    snapshot,
    ...extra,
  });

  const names = async (dir: string, rev = 'HEAD') =>
    (await j.git(dir, 'show', '--name-only', '--format=', rev)).trim().split('\n').filter(Boolean).sort();
  const count = async (dir: string, rev = 'HEAD') => Number((await j.git(dir, 'rev-list', '--count', rev)).trim());
  const porcelain = async (dir: string) => j.git(dir, 'status', '--porcelain', '--untracked-files=all');

  /** Runs `fn` (which calls afterTurn) and checks that nothing at all changed under `dir`. */
  async function untouched(dir: string, fn: () => Promise<AfterTurnResult>): Promise<AfterTurnResult> {
    const before = await j.fingerprint(dir);
    const r = await fn();
    expect(await j.fingerprint(dir)).toBe(before);
    return r;
  }

  const expectSkip = (r: AfterTurnResult, reason: string) => {
    expect(r.status).toBe('skipped');
    expect(r).toMatchObject({ reason });
    if (r.status === 'skipped' && r.reason !== 'nothing-to-commit') expect(r.warning.length).toBeGreaterThan(10);
  };

  describe(`project git: ${options.name}`, () => {
    describe('committing the agent’s edits', () => {
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

      it('commits what is staged and unstaged on the agent’s paths, an executable bit and a symlink, and leaves other files alone', async () => {
        const dir = await repo();
        const pg = projectGit();
        const snap = await pg.beforeTurn(dir);
        await j.write(`${dir}/bin/run.sh`, '#!/bin/sh\necho hi\n');
        await j.chmod(`${dir}/bin/run.sh`, 0o755);
        await j.symlink('src/main.ts', `${dir}/link`);
        await j.write(`${dir}/README.md`, '# staged by the agent\n');
        await j.git(dir, 'add', 'README.md');
        await j.write(`${dir}/README.md`, '# then edited again\n');
        const r = await pg.afterTurn(input(dir, ['bin/run.sh', 'link', 'README.md'], snap));
        expect(r).toMatchObject({ status: 'committed', paths: ['README.md', 'bin/run.sh', 'link'] });
        expect(
          (await j.git(dir, 'ls-tree', '-r', 'HEAD'))
            .split('\n')
            .filter(Boolean)
            .map((l) => `${l.split(/\s+/).slice(0, 2).join(' ')} ${l.split('\t')[1]}`),
        ).toEqual(['100644 blob README.md', '100755 blob bin/run.sh', '120000 blob link', '100644 blob src/main.ts']);
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
            [
              'index.ts',
              `${workdir}/lib/util.ts`,
              '../../other/x.ts',
              '/definitely/elsewhere.txt',
              '../../../outside.txt',
            ],
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
    });

    describe('the user’s uncommitted work blocks the commit, and nothing of theirs is touched', () => {
      it('user edits before the turn', async () => {
        const dir = await repo();
        await j.write(`${dir}/README.md`, '# the user is typing\n');
        const pg = projectGit();
        const snap = await pg.beforeTurn(dir);
        expect(snap.dirty).toEqual(['README.md']);
        await j.write(`${dir}/src/agent.ts`, 'agent\n');
        const r = await untouched(dir, () => pg.afterTurn(input(dir, ['src/agent.ts'], snap)));
        expect(r).toMatchObject({
          status: 'skipped',
          reason: 'uncommitted-changes',
          warning: UNCOMMITTED_CHANGES_WARNING,
          userPaths: ['README.md'],
          agentPaths: ['src/agent.ts'],
        });
        expect(await count(dir)).toBe(1);
      });

      it('user edits during the turn on another path', async () => {
        const dir = await repo();
        const pg = projectGit();
        const snap = await pg.beforeTurn(dir);
        await j.write(`${dir}/src/agent.ts`, 'agent\n');
        await j.write(`${dir}/src/main.ts`, 'export const x = 99; // the user, mid-turn\n');
        await j.write(`${dir}/scratch.txt`, 'untracked, the user’s\n');
        const r = await untouched(dir, () => pg.afterTurn(input(dir, ['src/agent.ts'], snap)));
        expect(r).toMatchObject({
          status: 'skipped',
          reason: 'uncommitted-changes',
          warning: UNCOMMITTED_CHANGES_WARNING,
          userPaths: ['scratch.txt', 'src/main.ts'],
        });
      });

      it('user edits on the same path the agent touched', async () => {
        const dir = await repo();
        await j.write(`${dir}/src/main.ts`, 'export const x = 1; // user note\n');
        const pg = projectGit();
        const snap = await pg.beforeTurn(dir);
        await j.write(`${dir}/src/main.ts`, 'export const x = 1; // user note\nexport const y = 2; // agent\n');
        const r = await untouched(dir, () => pg.afterTurn(input(dir, ['src/main.ts'], snap)));
        expect(r).toMatchObject({
          status: 'skipped',
          reason: 'uncommitted-changes',
          warning: UNCOMMITTED_CHANGES_WARNING,
          userPaths: ['src/main.ts'],
          agentPaths: [],
        });
      });

      it('the user edits, during the turn, the very file the agent wrote: with writtenBlobs it is theirs and blocks', async () => {
        const dir = await repo();
        const pg = projectGit();
        const snap = await pg.beforeTurn(dir);
        const agentBytes = 'export const x = 1;\nexport const y = 2; // agent\n';
        await j.write(`${dir}/src/main.ts`, agentBytes);
        await j.write(`${dir}/src/main.ts`, `${agentBytes}// the user, mid-turn\n`);
        const r = await untouched(dir, () =>
          pg.afterTurn(input(dir, ['src/main.ts'], snap, { writtenBlobs: { 'src/main.ts': gitBlobId(agentBytes) } })),
        );
        expect(r).toMatchObject({
          status: 'skipped',
          reason: 'uncommitted-changes',
          warning: UNCOMMITTED_CHANGES_WARNING,
          userPaths: ['src/main.ts'],
          agentPaths: [],
        });
      });

      it('writtenBlobs that match: the files commit (a removed one as removed), reported by absolute or relative path', async () => {
        const dir = await repo();
        const pg = projectGit();
        const snap = await pg.beforeTurn(dir);
        const agentBytes = 'export const x = 2; // agent\n';
        await j.write(`${dir}/src/main.ts`, agentBytes);
        await j.remove(`${dir}/README.md`);
        const r = await pg.afterTurn(
          input(dir, ['src/main.ts', 'README.md'], snap, {
            writtenBlobs: { [`${dir}/src/main.ts`]: gitBlobId(agentBytes), 'README.md': null },
          }),
        );
        expect(r).toMatchObject({ status: 'committed', paths: ['README.md', 'src/main.ts'] });
        expect(await j.git(dir, 'show', 'HEAD:src/main.ts')).toBe(agentBytes);
        expect(await j.git(dir, 'status', '--porcelain')).toBe('');
        await expect(pg.afterTurn(input(dir, ['a'], snap, { writtenBlobs: { a: 'not an id' } }))).rejects.toMatchObject(
          { code: 'INVALID_OPTION' },
        );
      });

      it('changes the user staged', async () => {
        const dir = await repo();
        await j.write(`${dir}/staged.txt`, 'staged by the user\n');
        await j.git(dir, 'add', 'staged.txt');
        const pg = projectGit();
        const snap = await pg.beforeTurn(dir);
        await j.write(`${dir}/a.txt`, 'agent\n');
        const r = await untouched(dir, () => pg.afterTurn(input(dir, ['a.txt'], snap)));
        expect(r).toMatchObject({ reason: 'uncommitted-changes', userPaths: ['staged.txt'] });
        expect(await j.git(dir, 'diff', '--cached', '--name-only')).toBe('staged.txt\n');
      });

      it('a user change outside the workdir, elsewhere in the repository', async () => {
        const dir = await repo({ 'web/index.html': '<p>\n', 'api/server.ts': 's\n' });
        await j.write(`${dir}/api/server.ts`, 's2\n');
        const pg = projectGit();
        const snap = await pg.beforeTurn(`${dir}/web`);
        await j.write(`${dir}/web/index.html`, '<p>agent</p>\n');
        const r = await untouched(dir, () => pg.afterTurn(input(`${dir}/web`, ['index.html'], snap)));
        expect(r).toMatchObject({
          reason: 'uncommitted-changes',
          userPaths: ['api/server.ts'],
          agentPaths: ['web/index.html'],
        });
      });

      it('without a snapshot: skips by default, commits with withoutSnapshot: trust-touched, and a foreign change blocks either way', async () => {
        const dir = await repo();
        await j.write(`${dir}/a.txt`, 'agent\n');
        const r = await untouched(dir, () => projectGit().afterTurn(input(dir, ['a.txt'], null)));
        expect(r).toMatchObject({ status: 'skipped', reason: 'no-snapshot', agentPaths: ['a.txt'] });
        await j.write(`${dir}/user.txt`, 'user\n');
        const blocked = await untouched(dir, () =>
          projectGit({ withoutSnapshot: 'trust-touched' }).afterTurn(input(dir, ['a.txt'], null)),
        );
        expect(blocked).toMatchObject({ reason: 'uncommitted-changes', userPaths: ['user.txt'] });
        await j.remove(`${dir}/user.txt`);
        expect(
          await projectGit({ withoutSnapshot: 'trust-touched' }).afterTurn(input(dir, ['a.txt'], null)),
        ).toMatchObject({ status: 'committed', paths: ['a.txt'] });
      });

      it('pending edits: a turn blocked by another session’s unfinished edits lands when that session’s turn ends', async () => {
        const dir = await repo();
        const pg = projectGit();
        const [snapA, snapB] = [await pg.beforeTurn(dir), await pg.beforeTurn(dir)];
        await j.write(`${dir}/a.txt`, 'session A\n');
        await j.write(`${dir}/b.txt`, 'session B\n');
        const a = await untouched(dir, () =>
          pg.afterTurn(input(dir, ['a.txt'], snapA, { sessionId: 'A', turn: 3, userMessage: 'do a' })),
        );
        expect(a).toMatchObject({
          status: 'skipped',
          reason: 'uncommitted-changes',
          userPaths: ['b.txt'],
          agentPaths: ['a.txt'],
        });
        const b = await pg.afterTurn(input(dir, ['b.txt'], snapB, { sessionId: 'B', turn: 5, userMessage: 'do b' }));
        expect(b).toMatchObject({
          status: 'committed',
          sessionId: 'B',
          turn: 5,
          paths: ['b.txt'],
          deferred: [{ sessionId: 'A', turn: 3, paths: ['a.txt'] }],
        });
        expect((await j.git(dir, 'log', '--format=%s', '-2')).trim().split('\n')).toEqual([
          '[agent B] turn 5: do b',
          '[agent A] turn 3: do a',
        ]);
        expect(await names(dir, 'HEAD')).toEqual(['b.txt']);
        expect(await names(dir, 'HEAD~1')).toEqual(['a.txt']);
        expect(await porcelain(dir)).toBe('');
      });

      it('pending edits: a pending file the user changed afterwards is theirs, and is never committed', async () => {
        const dir = await repo();
        const pg = projectGit();
        const [snapA, snapB] = [await pg.beforeTurn(dir), await pg.beforeTurn(dir)];
        await j.write(`${dir}/a.txt`, 'session A\n');
        await j.write(`${dir}/b.txt`, 'session B\n');
        expect(await pg.afterTurn(input(dir, ['a.txt'], snapA, { sessionId: 'A' }))).toMatchObject({
          reason: 'uncommitted-changes',
        });
        await j.write(`${dir}/a.txt`, 'session A\nand the user\n');
        const b = await untouched(dir, () => pg.afterTurn(input(dir, ['b.txt'], snapB, { sessionId: 'B' })));
        expect(b).toMatchObject({
          status: 'skipped',
          reason: 'uncommitted-changes',
          userPaths: ['a.txt'],
          agentPaths: ['b.txt'],
        });
        expect(await count(dir)).toBe(1);
      });
    });

    describe('states git is in: skip and warn, touching nothing', () => {
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
        expect(await untouched(dir, () => pg.afterTurn(input(`${dir}/missing/deeper`, ['a.txt'], null)))).toMatchObject(
          { status: 'skipped', reason: 'workdir-missing' },
        );
        expect(await j.exists(`${dir}/missing`)).toBe(false);
      });
    });

    describe('repository layouts', () => {
      /** A repository `lib` (own history, on `main`) added as a submodule of a fresh superproject. */
      const withSubmodule = async () => {
        const lib = await repo({ 'lib.txt': 'lib v1\n' });
        const dir = await repo({ 'app.txt': 'app\n' });
        await j.git(dir, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'lib');
        await j.git(dir, 'commit', '-q', '-m', 'add lib');
        return dir;
      };

      it('a submodule: the superproject’s own files commit and the gitlink stays; an edit inside the submodule skips', async () => {
        const dir = await withSubmodule();
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
        const dir = await withSubmodule();
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
    });
  });
}
