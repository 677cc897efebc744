// Shadow mode on the object engine (over node:fs, no git binary used to write), with native git
// judging the shadow repository it wrote: fsck, trees equal to native `git add -A` + `write-tree`
// over the same workdir and to the native engine's own snapshot, diffs equal to `git diff`, and the
// same restore rules — all without a byte changing under the user's .git.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AfterTurnInput } from '@entity-git/core';
import { nodeCodec, nodeStorage } from '@entity-git/node-fs';
import { describe, expect, it } from 'vitest';
import { ObjectShadowProjectGit, ObjectShadowRepository, SNAPSHOTS_REF, turnRef } from '../../src/index.js';
import { snapshotMessage } from '../../src/shadow-message.js';
import {
  createShadowProjectGit,
  ShadowProjectGit,
  ShadowRepository,
  turnRef as nativeTurnRef,
} from '../../src/node/index.js';
import { fingerprint, isolateGit, judge, nativeTree } from './judge.js';

const sh = promisify(execFile);
isolateGit();

const storage = nodeStorage();

async function setup(opts: { git: boolean; maxFileBytes?: number; keepTurns?: number; now?: () => number }) {
  const workdir = await judge.tempDir();
  const root = join(await judge.tempDir(), 'shadow');
  if (opts.git) {
    await judge.git(workdir, 'init', '-q', '-b', 'main');
    await judge.write(join(workdir, 'a.txt'), 'a1\n');
    await judge.git(workdir, 'add', '-A');
    await judge.git(workdir, 'commit', '-q', '-m', 'initial');
  } else await judge.write(join(workdir, 'a.txt'), 'a1\n');
  const { maxFileBytes, keepTurns, now } = opts;
  const projectGit = new ObjectShadowProjectGit({
    storage,
    codec: nodeCodec,
    root,
    ...(maxFileBytes !== undefined ? { maxFileBytes } : {}),
    ...(keepTurns !== undefined ? { keepTurns } : {}),
    ...(now ? { now } : {}),
  });
  const repo = await ObjectShadowRepository.open({ storage, root, workdir });
  const gitDir = join(repo.dir, 'git');
  // Native git reads the shadow repository from outside, as a user would.
  const shadow = (...args: string[]) => judge.git(workdir, `--git-dir=${gitDir}`, `--work-tree=${workdir}`, ...args);
  return { workdir, root, projectGit, repo, gitDir, shadow };
}

async function turn(
  projectGit: ObjectShadowProjectGit,
  at: { workdir: string; n: number; touchedPaths: string[] },
  work: () => Promise<unknown>,
): Promise<void> {
  const snapshot = await projectGit.beforeTurn(at.workdir);
  await work();
  const input: AfterTurnInput = {
    workdir: at.workdir,
    sessionId: 's1',
    turn: at.n,
    userMessage: `turn ${at.n}`,
    model: 'm',
    touchedPaths: at.touchedPaths,
    snapshot,
  };
  expect(await projectGit.afterTurn(input)).toMatchObject({ status: 'skipped', reason: 'shadow-mode', warning: null });
}

describe('shadow mode on the object engine, judged by native git', () => {
  it('a shell edit is in the snapshot and the diff, in a workdir that is no git repository; trees equal native write-tree', async () => {
    const { workdir, projectGit, shadow } = await setup({ git: false });
    await turn(projectGit, { workdir, n: 1, touchedPaths: [join(workdir, 'notes.md')] }, async () => {
      await fsp.writeFile(join(workdir, 'notes.md'), 'one\ntwo\n');
      await sh('sh', ['-c', 'printf "made by the shell\\n" > shell.txt && printf "a2\\n" >> a.txt'], { cwd: workdir });
      await sh('sh', ['-c', 'mkdir -p deep/er && printf "x\\n" > deep/er/x.sh && chmod +x deep/er/x.sh'], {
        cwd: workdir,
      });
      await fsp.symlink('a.txt', join(workdir, 'link'));
    });
    const files = await projectGit.listTurnFiles({ workdir, sessionId: 's1', turn: 1 });
    expect(files.files).toEqual([
      { path: 'a.txt', status: 'modified', added: 1, removed: 0, by: 'other' },
      { path: 'deep/er/x.sh', status: 'added', added: 1, removed: 0, by: 'other' },
      { path: 'link', status: 'added', added: 1, removed: 0, by: 'other' },
      { path: 'notes.md', status: 'added', added: 2, removed: 0, by: 'tools' },
      { path: 'shell.txt', status: 'added', added: 1, removed: 0, by: 'other' },
    ]);
    expect(await shadow('show', `${files.after}:shell.txt`)).toBe('made by the shell\n');
    expect(await shadow('rev-parse', turnRef('s1', 1, 'after'))).toBe(`${files.after}\n`);
    expect(await shadow('rev-parse', `${files.after}^`)).toBe(`${files.before}\n`);
    expect(await shadow('log', '-1', '--format=%(trailers:key=Turn,valueonly)', files.after)).toBe('1\n\n');
    expect(await shadow('rev-parse', `${files.after}^{tree}`)).toBe(`${await nativeTree(workdir)}\n`);
    // The shadow index is one native git agrees with: nothing to stage.
    expect(await shadow('status', '--porcelain', '--untracked-files=all')).toBe('');
    for (const path of ['a.txt', 'notes.md', 'deep/er/x.sh', 'link'])
      expect(await projectGit.turnFileDiff({ workdir, sessionId: 's1', turn: 1, path })).toBe(
        await shadow('diff', '--no-color', files.before, files.after, '--', path),
      );
    expect(await projectGit.turnFileDiff({ workdir, sessionId: 's1', turn: 1, path: 'absent' })).toBe('');
    await shadow('fsck', '--strict', '--no-progress');
    expect((await fsp.readdir(workdir)).sort()).toEqual(['a.txt', 'deep', 'link', 'notes.md', 'shell.txt']);
    await expect(projectGit.listTurnFiles({ workdir, sessionId: 's1', turn: 2 })).rejects.toMatchObject({
      code: 'SNAPSHOT_NOT_FOUND',
    });
  });

  it('diffs of edits in the middle, at the end without a newline, and a deletion equal git diff', async () => {
    const { workdir, projectGit, shadow } = await setup({ git: false });
    const long = Array.from({ length: 30 }, (_, i) => (i % 7 === 0 ? `function f${i}() {` : `  line ${i}`)).join('\n');
    await judge.write(join(workdir, 'long.txt'), `${long}\n`);
    await judge.write(join(workdir, 'gone.txt'), 'bye\n');
    const ten = Array.from({ length: 20 }, (_, i) => `row ${i + 1}`);
    await judge.write(join(workdir, 'mid.txt'), `${ten.join('\n')}\n`);
    await turn(projectGit, { workdir, n: 1, touchedPaths: [] }, async () => {
      await judge.write(join(workdir, 'long.txt'), `${long.replace('  line 16', '  line sixteen')}\nno newline`);
      await fsp.rm(join(workdir, 'gone.txt'));
      await judge.write(join(workdir, 'bin.dat'), Buffer.from([0, 1, 2, 3]));
      // A pure insertion after row 5 and a pure deletion of row 15: hunks with an empty side.
      const next = [...ten.slice(0, 5), 'inserted', ...ten.slice(5, 14), ...ten.slice(15)];
      await judge.write(join(workdir, 'mid.txt'), `${next.join('\n')}\n`);
    });
    const files = await projectGit.listTurnFiles({ workdir, sessionId: 's1', turn: 1 });
    expect(files.files.map((f) => [f.path, f.status, f.added, f.removed])).toEqual([
      ['bin.dat', 'added', null, null],
      ['gone.txt', 'deleted', 0, 1],
      ['long.txt', 'modified', 2, 1],
      ['mid.txt', 'modified', 1, 1],
    ]);
    const numstat = await shadow('diff', '--numstat', files.before, files.after);
    expect(numstat).toBe('-\t-\tbin.dat\n0\t1\tgone.txt\n2\t1\tlong.txt\n1\t1\tmid.txt\n');
    for (const path of ['long.txt', 'gone.txt', 'bin.dat', 'mid.txt'])
      expect(await projectGit.turnFileDiff({ workdir, sessionId: 's1', turn: 1, path })).toBe(
        await shadow('diff', '--no-color', files.before, files.after, '--', path),
      );
  });

  it('honours .gitignore and the size cap as the native engine does (same tree), and changes nothing under the user .git', async () => {
    const { workdir, root, projectGit, shadow } = await setup({ git: true, maxFileBytes: 1000 });
    await judge.write(join(workdir, '.gitignore'), 'build/\n*.log\n');
    await judge.write(join(workdir, 'sub', '.gitignore'), 'local-only\n');
    const before = await fingerprint(join(workdir, '.git'));
    await turn(projectGit, { workdir, n: 1, touchedPaths: [] }, async () => {
      await judge.write(join(workdir, 'build', 'out.js'), 'ignored\n');
      await judge.write(join(workdir, 'debug.log'), 'ignored\n');
      await judge.write(join(workdir, 'sub', 'local-only'), 'ignored\n');
      await judge.write(join(workdir, 'sub', 'kept.txt'), 'kept\n');
      await judge.write(join(workdir, 'big.bin'), Buffer.alloc(1001, 7));
      await judge.write(join(workdir, 'small.txt'), 'lf only\n');
    });
    const files = await projectGit.listTurnFiles({ workdir, sessionId: 's1', turn: 1 });
    expect(files.files.map((f) => f.path)).toEqual(['small.txt', 'sub/kept.txt']);
    expect(await shadow('log', '-1', '--format=%(trailers:key=Over-Size-Cap,valueonly)', files.after)).toBe(
      '["big.bin"]\n\n',
    );
    const tree = (await shadow('rev-parse', `${files.after}^{tree}`)).trim();
    // The native engine's snapshot of the same workdir, under a root of its own.
    const native = await ShadowRepository.open({ root: join(root, '..', 'native'), workdir, maxFileBytes: 1000 });
    const nativeSnap = await native.snapshot({ kind: 'before' });
    expect(
      (
        await judge.git(workdir, `--git-dir=${join(native.dir, 'git')}`, 'rev-parse', `${nativeSnap.commit}^{tree}`)
      ).trim(),
    ).toBe(tree);
    expect(nativeSnap.overSizeCap).toEqual(['big.bin']);
    // Both engines name the project's directory the same way.
    expect(native.dir.slice(-32)).toBe((await ObjectShadowRepository.open({ storage, root, workdir })).dir.slice(-32));
    expect(nativeTurnRef('s1 ✓', 7, 'after')).toBe(turnRef('s1 ✓', 7, 'after'));
    expect(await fingerprint(join(workdir, '.git'))).toBe(before);
    await shadow('fsck', '--strict', '--no-progress');
  });

  it("writes the native engine's tree at every step: ignore rules added later, the size cap, a file become a directory, modes, links", async () => {
    const workdir = await judge.tempDir();
    const base = await judge.tempDir();
    const object = await ObjectShadowRepository.open({ storage, root: join(base, 'o'), workdir, maxFileBytes: 100 });
    const native = await ShadowRepository.open({ root: join(base, 'n'), workdir, maxFileBytes: 100 });
    const nativeTreeOf = async (c: string) =>
      (await judge.git(workdir, `--git-dir=${join(native.dir, 'git')}`, 'rev-parse', `${c}^{tree}`)).trim();
    const objectTreeOf = async (c: string) => (await object.commit(c)).tree;
    const steps: Array<[string, () => Promise<unknown>]> = [
      [
        'files',
        () => Promise.all([judge.write(join(workdir, 'a.txt'), 'a\n'), judge.write(join(workdir, 'd/x.txt'), 'x\n')]),
      ],
      [
        'a rule ignores a tracked file and a new one',
        () =>
          Promise.all([
            judge.write(join(workdir, '.gitignore'), 'a.txt\nnew.txt\nd/\n'),
            judge.write(join(workdir, 'new.txt'), 'n\n'),
            judge.write(join(workdir, 'd/y.txt'), 'y\n'),
          ]),
      ],
      ['a tracked file grows over the cap', () => judge.write(join(workdir, 'a.txt'), 'a'.repeat(101))],
      [
        'a file becomes a directory',
        async () => {
          await fsp.rm(join(workdir, 'd/x.txt'));
          await judge.write(join(workdir, 'd/x.txt/inner.txt'), 'inner\n');
          await judge.write(join(workdir, 'e'), 'a file\n');
        },
      ],
      [
        'modes and links',
        async () => {
          await judge.write(join(workdir, 'run.sh'), '#!/bin/sh\n');
          await fsp.chmod(join(workdir, 'run.sh'), 0o755);
          await fsp.symlink('run.sh', join(workdir, 'run'));
          await fsp.rm(join(workdir, '.gitignore'));
        },
      ],
    ];
    for (const [what, step] of steps) {
      await step();
      const [o, n] = [await object.snapshot({ kind: 'after' }), await native.snapshot({ kind: 'after' })];
      expect(await objectTreeOf(o.commit), what).toBe(await nativeTreeOf(n.commit));
      expect(o.overSizeCap, what).toEqual(n.overSizeCap);
    }
    await judge.git(workdir, `--git-dir=${object.gitDir}`, 'fsck', '--strict', '--no-progress');
  });

  it('restores a turn except the file the user edited since, and undoing the restore gives back the exact tree', async () => {
    const { workdir, projectGit, shadow } = await setup({ git: true });
    const userGit = await fingerprint(join(workdir, '.git'));
    await judge.write(join(workdir, 'b.txt'), 'b1\n');
    await judge.write(join(workdir, 'untouched.txt'), 'the user keeps this\n');
    await turn(projectGit, { workdir, n: 1, touchedPaths: ['a.txt', 'b.txt'] }, async () => {
      await judge.write(join(workdir, 'a.txt'), 'a by the agent\n');
      await judge.write(join(workdir, 'b.txt'), 'b by the agent\n');
      await sh('sh', ['-c', 'mkdir -p gen && echo generated > gen/c.txt'], { cwd: workdir });
    });
    // Turn 2 changes a.txt again: an agent's change, so a.txt still restores to its state before turn 1.
    await turn(projectGit, { workdir, n: 2, touchedPaths: ['a.txt'] }, () =>
      judge.write(join(workdir, 'a.txt'), 'a again\n'),
    );
    await judge.write(join(workdir, 'b.txt'), 'the user fixed b\n');
    const treeBefore = await nativeTree(workdir);
    const result = await projectGit.restoreTurnFiles({ workdir, sessionId: 's1', turn: 1 });
    expect(result.paths).toEqual(['a.txt', 'gen/c.txt']);
    expect(result.skipped).toEqual([{ path: 'b.txt', reason: 'changed-since-last-snapshot' }]);
    expect(await fsp.readFile(join(workdir, 'a.txt'), 'utf8')).toBe('a1\n');
    expect(await fsp.readFile(join(workdir, 'b.txt'), 'utf8')).toBe('the user fixed b\n');
    await expect(fsp.stat(join(workdir, 'gen', 'c.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await fsp.readFile(join(workdir, 'untouched.txt'), 'utf8')).toBe('the user keeps this\n');
    // The restore point is the work tree as it was, as native git writes it.
    expect(await shadow('rev-parse', `${result.restorePoint}^{tree}`)).toBe(`${treeBefore}\n`);
    expect(await fingerprint(join(workdir, '.git'))).toBe(userGit);
    const undone = await projectGit.undoRestore({ workdir, restored: result.restored });
    expect(undone.paths).toEqual(['a.txt', 'gen/c.txt']);
    expect(undone.skipped).toEqual([]);
    expect(await shadow('rev-parse', `${undone.restored}^{tree}`)).toBe(`${treeBefore}\n`);
    expect(await nativeTree(workdir)).toBe(treeBefore);
    expect(await fsp.readFile(join(workdir, 'gen', 'c.txt'), 'utf8')).toBe('generated\n');
    expect(await shadow('rev-parse', SNAPSHOTS_REF)).toBe(`${undone.restored}\n`);
    await shadow('fsck', '--strict', '--no-progress');
    expect(await fingerprint(join(workdir, '.git'))).toBe(userGit);
  });

  it('skips a file the user changed between turns since the restored turn', async () => {
    const { workdir, projectGit } = await setup({ git: false });
    await turn(projectGit, { workdir, n: 1, touchedPaths: ['a.txt'] }, () =>
      judge.write(join(workdir, 'a.txt'), 'agent\n'),
    );
    await judge.write(join(workdir, 'a.txt'), 'user between turns\n');
    await turn(projectGit, { workdir, n: 2, touchedPaths: [] }, async () => undefined);
    const result = await projectGit.restoreTurnFiles({ workdir, sessionId: 's1', turn: 1 });
    expect(result.skipped).toEqual([{ path: 'a.txt', reason: 'changed-outside-a-turn' }]);
    expect(await fsp.readFile(join(workdir, 'a.txt'), 'utf8')).toBe('user between turns\n');
  });

  it('writes the commit native git writes for the same tree, message and time', async () => {
    const { workdir, repo, gitDir } = await setup({ git: false });
    const timed = await ObjectShadowRepository.open({
      storage,
      root: join(repo.dir, '..'),
      workdir,
      now: () => 1_700_000_000_000,
    });
    const snap = await timed.snapshot({ kind: 'before' });
    const tree = (await judge.git(workdir, `--git-dir=${gitDir}`, 'rev-parse', `${snap.commit}^{tree}`)).trim();
    const child = execFile('git', [`--git-dir=${gitDir}`, 'commit-tree', tree, '-F', '-'], {
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'entity-git',
        GIT_AUTHOR_EMAIL: 'shadow@entity-git.invalid',
        GIT_AUTHOR_DATE: '@1700000000 +0000',
        GIT_COMMITTER_NAME: 'entity-git',
        GIT_COMMITTER_EMAIL: 'shadow@entity-git.invalid',
        GIT_COMMITTER_DATE: '@1700000000 +0000',
      },
    });
    const out = new Promise<string>((done) => {
      let text = '';
      child.stdout!.on('data', (d) => (text += d));
      child.on('close', () => done(text.trim()));
    });
    child.stdin!.end(snapshotMessage({ kind: 'before', overSizeCap: [] }));
    expect(await out).toBe(snap.commit);
  });

  it('keeps the newest N turns: older refs and unreachable objects go, the rest passes fsck --strict', async () => {
    const { workdir, projectGit, shadow, gitDir } = await setup({ git: false, keepTurns: 2 });
    let first = '';
    for (let n = 1; n <= 4; n++) {
      await turn(projectGit, { workdir, n, touchedPaths: ['a.txt'] }, () =>
        judge.write(join(workdir, 'a.txt'), `turn ${n}\n`),
      );
      if (n === 1) first = (await projectGit.listTurnFiles({ workdir, sessionId: 's1', turn: 1 })).before;
    }
    const refs = await shadow('for-each-ref', '--format=%(refname)', 'refs/turns/');
    expect(refs.split('\n').filter(Boolean)).toEqual([
      turnRef('s1', 3, 'after'),
      turnRef('s1', 3, 'before'),
      turnRef('s1', 4, 'after'),
      turnRef('s1', 4, 'before'),
    ]);
    await expect(projectGit.listTurnFiles({ workdir, sessionId: 's1', turn: 1 })).rejects.toMatchObject({
      code: 'SNAPSHOT_NOT_FOUND',
    });
    expect((await projectGit.listTurnFiles({ workdir, sessionId: 's1', turn: 3 })).files.map((f) => f.path)).toEqual([
      'a.txt',
    ]);
    expect((await fsp.readFile(join(gitDir, 'shallow'), 'utf8')).trim()).toBe(
      (await shadow('rev-parse', turnRef('s1', 3, 'before'))).trim(),
    );
    // What only the dropped turns reached is deleted: the first snapshot and turn 1's version of a.txt.
    const blobOf = (text: string) =>
      createHash('sha1')
        .update(`blob ${Buffer.byteLength(text)}\0${text}`)
        .digest('hex');
    const has = (oid: string) => judge.gitCode(workdir, `--git-dir=${gitDir}`, 'cat-file', '-e', oid);
    expect(await has(first)).not.toBe(0);
    expect(await has(blobOf('turn 1\n'))).not.toBe(0);
    expect(await has(blobOf('turn 2\n'))).toBe(0); // turn 3's before-snapshot holds it
    expect(await has(blobOf('turn 4\n'))).toBe(0);
    await shadow('fsck', '--strict', '--no-progress');
  });

  it('inspect takes no snapshot in either mode', async () => {
    const { workdir, projectGit, shadow } = await setup({ git: true });
    await turn(projectGit, { workdir, n: 1, touchedPaths: ['a.txt'] }, () =>
      judge.write(join(workdir, 'a.txt'), 'x\n'),
    );
    const refs = async () => await shadow('for-each-ref', '--format=%(refname) %(objectname)');
    const before = await refs();
    await judge.write(join(workdir, 'b.txt'), 'the user edits\n');
    const seen = await projectGit.inspect(workdir);
    expect([seen.state, seen.dirty, seen.shadowBefore]).toEqual(['repository', [], undefined]);
    await projectGit.configure(workdir, { mode: 'auto-commit' });
    const auto = await projectGit.inspect(workdir);
    expect([auto.dirty, auto.shadowBefore]).toEqual([['a.txt', 'b.txt'], undefined]);
    expect(await refs()).toBe(before);
  });

  it('on Node, createShadowProjectGit takes native git when there is one, else the object engine', async () => {
    const root = join(await judge.tempDir(), 'shadow');
    expect(createShadowProjectGit({ root })).toBeInstanceOf(ShadowProjectGit);
    const fallback = createShadowProjectGit({ root, gitPath: '/nonexistent/git' });
    expect(fallback).toBeInstanceOf(ObjectShadowProjectGit);
    const workdir = await judge.tempDir();
    await judge.write(join(workdir, 'a.txt'), 'a\n');
    const snapshot = await fallback.beforeTurn(workdir);
    await judge.write(join(workdir, 'a.txt'), 'b\n');
    await fallback.afterTurn({
      workdir,
      sessionId: 's',
      turn: 1,
      userMessage: 'u',
      model: 'm',
      touchedPaths: [],
      snapshot,
    });
    expect((await fallback.listTurnFiles({ workdir, sessionId: 's', turn: 1 })).files.map((f) => f.path)).toEqual([
      'a.txt',
    ]);
  });
});
