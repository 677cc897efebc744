// Shadow mode with native git judging: snapshots of the whole work tree (shell edits included),
// turn file diffs, and a restore that skips the user's edits and can itself be undone — all
// without a byte changing under the user's .git.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AfterTurnInput } from '@entity-git/core';
import { describe, expect, it } from 'vitest';
import { ShadowProjectGit, ShadowRepository, SNAPSHOTS_REF, turnRef } from '../../src/node/index.js';
import { fingerprint, isolateGit, judge } from './judge.js';

const sh = promisify(execFile);
/** A blob's abbreviated id, as git's diff header shows it. */
const blob = (text: string) =>
  createHash('sha1')
    .update(`blob ${Buffer.byteLength(text)}\0${text}`)
    .digest('hex')
    .slice(0, 7);
isolateGit();

async function setup(opts: { git: boolean }) {
  const workdir = await judge.tempDir();
  const root = join(await judge.tempDir(), 'shadow');
  if (opts.git) {
    await judge.git(workdir, 'init', '-q', '-b', 'main');
    await judge.write(join(workdir, 'a.txt'), 'a1\n');
    await judge.git(workdir, 'add', '-A');
    await judge.git(workdir, 'commit', '-q', '-m', 'initial');
  } else await judge.write(join(workdir, 'a.txt'), 'a1\n');
  const projectGit = new ShadowProjectGit({ root });
  const repo = await ShadowRepository.open({ root, workdir });
  // Native git reads the shadow repository from outside, as a user would.
  const shadow = (...args: string[]) => judge.git(workdir, `--git-dir=${join(repo.dir, 'git')}`, ...args);
  return { workdir, root, projectGit, repo, shadow };
}

async function turn(
  projectGit: ShadowProjectGit,
  workdir: string,
  n: number,
  work: () => Promise<void>,
  touchedPaths: string[],
): Promise<void> {
  const snapshot = await projectGit.beforeTurn(workdir);
  await work();
  const input: AfterTurnInput = {
    workdir,
    sessionId: 's1',
    turn: n,
    userMessage: `turn ${n}`,
    model: 'm',
    touchedPaths,
    snapshot,
  };
  const r = await projectGit.afterTurn(input);
  expect(r).toMatchObject({ status: 'skipped', reason: 'shadow-mode', warning: null });
}

describe('shadow mode (native git)', () => {
  it('snapshots a shell edit and a tool edit in a workdir that is no git repository; diffs say who changed what', async () => {
    const { workdir, projectGit, shadow, repo } = await setup({ git: false });
    await turn(
      projectGit,
      workdir,
      1,
      async () => {
        await fsp.writeFile(join(workdir, 'notes.md'), 'one\ntwo\n');
        await sh('sh', ['-c', 'printf "made by the shell\\n" > shell.txt && printf "a2\\n" >> a.txt'], {
          cwd: workdir,
        });
      },
      [join(workdir, 'notes.md')],
    );
    const files = await projectGit.listTurnFiles({ workdir, sessionId: 's1', turn: 1 });
    expect(files.files).toEqual([
      { path: 'a.txt', status: 'modified', added: 1, removed: 0, by: 'other' },
      { path: 'notes.md', status: 'added', added: 2, removed: 0, by: 'tools' },
      { path: 'shell.txt', status: 'added', added: 1, removed: 0, by: 'other' },
    ]);
    expect(await shadow('show', `${files.after}:shell.txt`)).toBe('made by the shell\n');
    expect(await shadow('rev-parse', turnRef('s1', 1, 'after'))).toBe(`${files.after}\n`);
    expect(await shadow('rev-parse', `${files.after}^`)).toBe(`${files.before}\n`);
    expect(await shadow('log', '-1', '--format=%(trailers:key=Turn,valueonly)', files.after)).toBe('1\n\n');
    expect(await projectGit.turnFileDiff({ workdir, sessionId: 's1', turn: 1, path: 'a.txt' })).toBe(
      `diff --git a/a.txt b/a.txt\nindex ${blob('a1\n')}..${blob('a1\na2\n')} 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n a1\n+a2\n`,
    );
    await shadow('fsck', '--strict', '--no-progress');
    expect((await fsp.stat(repo.dir)).mode & 0o777).toBe(0o700);
    expect((await fsp.stat(join(repo.dir, 'git', 'index'))).mode & 0o777).toBe(0o600);
    expect(await fsp.readdir(workdir)).toEqual(['a.txt', 'notes.md', 'shell.txt']);
    await expect(projectGit.listTurnFiles({ workdir, sessionId: 's1', turn: 2 })).rejects.toMatchObject({
      code: 'SNAPSHOT_NOT_FOUND',
    });
  });

  it('honours .gitignore and the size cap, keeps bytes as they are, and changes nothing under the user .git', async () => {
    const { workdir, root, shadow } = await setup({ git: true });
    const projectGit = new ShadowProjectGit({ root, maxFileBytes: 1000 });
    await judge.write(join(workdir, '.gitignore'), 'build/\n');
    await judge.write(join(workdir, '.gitattributes'), '* text eol=crlf filter=evil\n');
    // A hostile repository: a hook and an fsmonitor that would leave a mark if git ran them.
    await judge.write(join(workdir, '.git', 'hooks', 'post-commit'), `#!/bin/sh\ntouch ${workdir}/HOOK-RAN\n`);
    await fsp.chmod(join(workdir, '.git', 'hooks', 'post-commit'), 0o755);
    await judge.git(workdir, 'config', 'core.fsmonitor', `touch ${workdir}/FSMONITOR-RAN; false`);
    const before = await fingerprint(join(workdir, '.git'));
    await turn(
      projectGit,
      workdir,
      1,
      async () => {
        await judge.write(join(workdir, 'build', 'out.js'), 'ignored\n');
        await judge.write(join(workdir, 'big.bin'), Buffer.alloc(1001, 7));
        await judge.write(join(workdir, 'small.txt'), 'lf only\n');
      },
      [],
    );
    const files = await projectGit.listTurnFiles({ workdir, sessionId: 's1', turn: 1 });
    expect(files.files.map((f) => f.path)).toEqual(['small.txt']);
    expect(await shadow('cat-file', '-p', `${files.after}:small.txt`)).toBe('lf only\n');
    expect(await shadow('log', '-1', '--format=%(trailers:key=Over-Size-Cap,valueonly)', files.after)).toBe(
      '["big.bin"]\n\n',
    );
    expect(await fingerprint(join(workdir, '.git'))).toBe(before);
    await expect(fsp.stat(join(workdir, 'HOOK-RAN'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(fsp.stat(join(workdir, 'FSMONITOR-RAN'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('restores a turn except the file the user edited since, and undoing the restore gives back the exact tree', async () => {
    const { workdir, projectGit, shadow } = await setup({ git: true });
    const userGit = await fingerprint(join(workdir, '.git'));
    await judge.write(join(workdir, 'b.txt'), 'b1\n');
    await judge.write(join(workdir, 'untouched.txt'), 'the user keeps this\n');
    await turn(
      projectGit,
      workdir,
      1,
      async () => {
        await judge.write(join(workdir, 'a.txt'), 'a by the agent\n');
        await judge.write(join(workdir, 'b.txt'), 'b by the agent\n');
        await sh('sh', ['-c', 'mkdir -p gen && echo generated > gen/c.txt'], { cwd: workdir });
      },
      ['a.txt', 'b.txt'],
    );
    // Turn 2 changes a.txt again: an agent's change, so a.txt still restores to its state before turn 1.
    await turn(projectGit, workdir, 2, () => judge.write(join(workdir, 'a.txt'), 'a again\n'), ['a.txt']);
    await judge.write(join(workdir, 'b.txt'), 'the user fixed b\n');
    const result = await projectGit.restoreTurnFiles({ workdir, sessionId: 's1', turn: 1 });
    expect(result.paths).toEqual(['a.txt', 'gen/c.txt']);
    expect(result.skipped).toEqual([{ path: 'b.txt', reason: 'changed-since-last-snapshot' }]);
    expect(await fsp.readFile(join(workdir, 'a.txt'), 'utf8')).toBe('a1\n');
    expect(await fsp.readFile(join(workdir, 'b.txt'), 'utf8')).toBe('the user fixed b\n');
    await expect(fsp.stat(join(workdir, 'gen', 'c.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await fsp.readFile(join(workdir, 'untouched.txt'), 'utf8')).toBe('the user keeps this\n');
    // The user's branch and .git stay as they were.
    expect(await fingerprint(join(workdir, '.git'))).toBe(userGit);
    const undone = await projectGit.undoRestore({ workdir, restored: result.restored });
    expect(undone.paths).toEqual(['a.txt', 'gen/c.txt']);
    expect(undone.skipped).toEqual([]);
    const tree = (c: string) => shadow('rev-parse', `${c}^{tree}`);
    expect(await tree(undone.restored)).toBe(await tree(result.restorePoint));
    expect(await fsp.readFile(join(workdir, 'a.txt'), 'utf8')).toBe('a again\n');
    expect(await fsp.readFile(join(workdir, 'gen', 'c.txt'), 'utf8')).toBe('generated\n');
    expect(await shadow('rev-parse', SNAPSHOTS_REF)).toBe(`${undone.restored}\n`);
    await shadow('fsck', '--strict', '--no-progress');
    expect(await fingerprint(join(workdir, '.git'))).toBe(userGit);
  });

  it('skips a file the user changed between turns since the restored turn', async () => {
    const { workdir, projectGit } = await setup({ git: false });
    await turn(projectGit, workdir, 1, () => judge.write(join(workdir, 'a.txt'), 'agent\n'), ['a.txt']);
    await judge.write(join(workdir, 'a.txt'), 'user between turns\n');
    await turn(projectGit, workdir, 2, async () => undefined, []);
    const result = await projectGit.restoreTurnFiles({ workdir, sessionId: 's1', turn: 1 });
    expect(result.skipped).toEqual([{ path: 'a.txt', reason: 'changed-outside-a-turn' }]);
    expect(await fsp.readFile(join(workdir, 'a.txt'), 'utf8')).toBe('user between turns\n');
  });

  it('is chosen per project: shadow by default, auto-commit on request (then both run)', async () => {
    const { workdir, projectGit } = await setup({ git: true });
    const head = await judge.git(workdir, 'rev-parse', 'HEAD');
    await turn(projectGit, workdir, 1, () => judge.write(join(workdir, 'a.txt'), 'x\n'), ['a.txt']);
    expect(await judge.git(workdir, 'rev-parse', 'HEAD')).toBe(head);
    await judge.git(workdir, 'commit', '-q', '-am', 'the user commits the turn');
    expect(await projectGit.configure(workdir, { mode: 'auto-commit' })).toMatchObject({ mode: 'auto-commit' });
    const snapshot = await projectGit.beforeTurn(workdir);
    await judge.write(join(workdir, 'a.txt'), 'y\n');
    const r = await projectGit.afterTurn({
      workdir,
      sessionId: 's1',
      turn: 2,
      userMessage: 'two',
      model: 'm',
      touchedPaths: ['a.txt'],
      snapshot,
    });
    expect(r.status).toBe('committed');
    expect((await projectGit.listTurnFiles({ workdir, sessionId: 's1', turn: 2 })).files.map((f) => f.path)).toEqual([
      'a.txt',
    ]);
    await expect(projectGit.configure(workdir, { mode: 'bogus' as 'shadow' })).rejects.toMatchObject({
      code: 'INVALID_OPTION',
    });
  });
  it('inspect takes no snapshot in either mode: a status view may ask it as often as it likes', async () => {
    const { workdir, projectGit, shadow } = await setup({ git: true });
    await turn(projectGit, workdir, 1, () => judge.write(join(workdir, 'a.txt'), 'x\n'), ['a.txt']);
    const snapshots = async () => (await shadow('rev-list', '--count', SNAPSHOTS_REF)).trim();
    const refs = async () => await shadow('for-each-ref', '--format=%(refname) %(objectname)');
    const [count, before] = [await snapshots(), await refs()];
    await judge.write(join(workdir, 'b.txt'), 'the user edits\n');
    const seen = await projectGit.inspect(workdir);
    expect(seen).toMatchObject({ state: 'repository', dirty: [], agentDirty: [] });
    expect(seen.shadowBefore).toBeUndefined();
    expect([await snapshots(), await refs()]).toEqual([count, before]);
    // In auto-commit mode it reports the user's uncommitted paths, as the auto-commit's own does.
    await projectGit.configure(workdir, { mode: 'auto-commit' });
    const auto = await projectGit.inspect(workdir);
    expect([auto.dirty, auto.shadowBefore]).toEqual([['a.txt', 'b.txt'], undefined]);
    expect([await snapshots(), await refs()]).toEqual([count, before]);
  });
});
