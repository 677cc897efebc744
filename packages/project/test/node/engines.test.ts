import { execFileSync } from 'node:child_process';
import * as fsp from 'node:fs/promises';
import { createObjectEngine, createProjectGit, type ProjectGitEngine } from '@entity-git/project';
import {
  NATIVE_GIT_ENGINE,
  createNodeProjectGit,
  defaultProjectGitEngine,
  nativeGitEngine,
  workdirJournal,
  workdirLock,
} from '@entity-git/project/node';
import { nodeStorage } from '@entity-git/node-fs';
import { describe, expect, it } from 'vitest';
import { fingerprint, isolateGit, judge } from './judge.js';

const home = isolateGit();
const native = nativeGitEngine();
const iso = createObjectEngine({ storage: nodeStorage() });

async function repo(): Promise<string> {
  const dir = await judge.tempDir();
  await judge.git(dir, 'init', '-q', '-b', 'main');
  await judge.write(`${dir}/a.txt`, 'a\n');
  await judge.git(dir, 'add', '-A');
  await judge.git(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}

async function turn(engine: ProjectGitEngine, dir: string) {
  const pg = createProjectGit({ engine });
  const snapshot = await pg.beforeTurn(dir);
  await judge.write(`${dir}/agent.txt`, `agent ${engine.name}\n`);
  const before = await fingerprint(dir);
  const r = await pg.afterTurn({
    workdir: dir,
    sessionId: 's',
    turn: 1,
    userMessage: 'x',
    model: 'm',
    touchedPaths: ['agent.txt'],
    snapshot,
  });
  return { r, unchanged: (await fingerprint(dir)) === before };
}

describe('what only one engine can do safely', () => {
  it('a split index: native commits, the object engine skips as unsupported and touches nothing', async () => {
    const dir = await repo();
    await judge.git(dir, 'update-index', '--split-index');
    const i = await turn(iso, dir);
    expect(i.r).toMatchObject({
      status: 'skipped',
      reason: 'unsupported-repository',
      warning: expect.stringContaining('split index'),
    });
    expect(i.unchanged).toBe(true);
    await judge.remove(`${dir}/agent.txt`);
    expect((await turn(native, dir)).r).toMatchObject({ status: 'committed', paths: ['agent.txt'] });
    expect(await judge.git(dir, 'status', '--porcelain')).toBe('');
  });

  it('clean/smudge filters and core.autocrlf: the object engine refuses, native applies them', async () => {
    const dir = await repo();
    await judge.write(`${dir}/.gitattributes`, '*.bin filter=lfs diff=lfs merge=lfs -text\n');
    await judge.git(dir, 'add', '.gitattributes');
    await judge.git(dir, 'commit', '-q', '-m', 'attributes');
    expect((await turn(iso, dir)).r).toMatchObject({
      reason: 'unsupported-repository',
      warning: expect.stringContaining('filter'),
    });
    const crlf = await repo();
    await judge.git(crlf, 'config', 'core.autocrlf', 'input');
    expect((await turn(iso, crlf)).r).toMatchObject({
      reason: 'unsupported-repository',
      warning: expect.stringContaining('autocrlf'),
    });
    await judge.write(`${crlf}/dos.txt`, 'one\r\ntwo\r\n');
    const pg = createProjectGit({ engine: native });
    const snapshot = await pg.beforeTurn(crlf);
    expect(
      await pg.afterTurn({
        workdir: crlf,
        sessionId: 's',
        turn: 2,
        userMessage: 'x',
        model: 'm',
        touchedPaths: ['dos.txt', 'agent.txt'],
        snapshot: { ...snapshot, dirty: snapshot.dirty.filter((p) => p !== 'dos.txt' && p !== 'agent.txt') },
      }),
    ).toMatchObject({ status: 'committed' });
    expect(await judge.git(crlf, 'show', 'HEAD:dos.txt')).toBe('one\ntwo\n');
  });

  it('a SHA-256 repository is unsupported by both', async () => {
    const dir = await judge.tempDir();
    await judge.git(dir, 'init', '-q', '--object-format=sha256', '-b', 'main');
    for (const engine of [native, iso])
      expect((await turn(engine, dir)).r).toMatchObject({ reason: 'unsupported-repository' });
  });

  it('a .git that git cannot read is an error, never a reason to init over it', async () => {
    const dir = await judge.tempDir();
    await judge.write(`${dir}/.git`, 'garbage\n');
    for (const engine of [native, iso]) {
      const pg = createProjectGit({ engine });
      await expect(
        pg.afterTurn({
          workdir: dir,
          sessionId: 's',
          turn: 1,
          userMessage: 'x',
          model: 'm',
          touchedPaths: ['a'],
          snapshot: null,
        }),
      ).rejects.toMatchObject({ code: 'PROJECT_GIT_ERROR' });
    }
    expect(await judge.read(`${dir}/.git`)).toBe('garbage\n');
  });
});

describe('the native engine', () => {
  it('ignores GIT_* variables a hook or wrapper set, which would point it at another repository', async () => {
    const dir = await repo();
    const decoy = await repo();
    const saved = { ...process.env };
    Object.assign(process.env, {
      GIT_DIR: `${decoy}/.git`,
      GIT_WORK_TREE: decoy,
      GIT_INDEX_FILE: `${decoy}/.git/index`,
    });
    try {
      expect((await turn(native, dir)).r).toMatchObject({ status: 'committed' });
    } finally {
      for (const k of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE']) delete process.env[k];
      Object.assign(process.env, saved);
    }
    expect((await judge.git(decoy, 'rev-list', '--count', 'HEAD')).trim()).toBe('1');
    expect((await judge.git(dir, 'rev-list', '--count', 'HEAD')).trim()).toBe('2');
  });

  it('reports a git binary that is not there as GIT_NOT_FOUND', async () => {
    const engine = nativeGitEngine({ gitPath: '/nonexistent/git' });
    await expect(engine.inspect(await judge.tempDir())).rejects.toMatchObject({ code: 'GIT_NOT_FOUND' });
  });

  it('is the default on Node when git is found', () => {
    expect(defaultProjectGitEngine().name).toBe(NATIVE_GIT_ENGINE);
    expect(defaultProjectGitEngine({ gitPath: '/nonexistent/git' }).name).toBe('object');
  });
});

describe('Node coordination: the lock and the journal live outside the user’s directory', () => {
  it('createNodeProjectGit keeps its files under the given directory, keyed by the real path, and leaves only its record of agent commits behind', async () => {
    const dir = await repo();
    const link = `${await judge.tempDir()}/link`;
    await fsp.symlink(dir, link);
    const lockDir = `${home}/coordination`;
    const pg = createNodeProjectGit({ dir: lockDir, initialBranch: 'main' });
    const seen: string[][] = [];
    const lock = workdirLock({ dir: lockDir });
    // The same directory through a symlink takes the same lock.
    await lock(dir, async () => {
      seen.push(await fsp.readdir(lockDir));
      await expect(
        Promise.race([lock(link, async () => 'second'), new Promise((r) => setTimeout(() => r('waited'), 300))]),
      ).resolves.toBe('waited');
    });
    expect(seen[0]!.filter((n) => n.endsWith('.lock'))).toHaveLength(1);
    const snapshot = await pg.beforeTurn(link);
    await judge.write(`${dir}/user.txt`, 'user\n');
    await judge.write(`${dir}/agent.txt`, 'agent\n');
    expect(
      await pg.afterTurn({
        workdir: link,
        sessionId: 's',
        turn: 1,
        userMessage: 'x',
        model: 'm',
        touchedPaths: [`${link}/agent.txt`],
        snapshot,
      }),
    ).toMatchObject({ reason: 'uncommitted-changes', agentPaths: ['agent.txt'] });
    // The pending edit is on disk, beside the lock, not in the repository.
    const files = await fsp.readdir(lockDir);
    expect(files.filter((n) => n.endsWith('.pending.json'))).toHaveLength(1);
    expect(await workdirJournal({ dir: lockDir }).read(dir)).toMatchObject([
      { sessionId: 's', turn: 1, files: [{ path: 'agent.txt' }] },
    ]);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: dir, encoding: 'utf8' })).toBe(
      '?? agent.txt\n?? user.txt\n',
    );
    await judge.remove(`${dir}/user.txt`);
    const next = await pg.afterTurn({
      workdir: dir,
      sessionId: 't',
      turn: 4,
      userMessage: 'y',
      model: 'm',
      touchedPaths: [],
      snapshot: await pg.beforeTurn(dir),
    });
    expect(next).toMatchObject({
      status: 'skipped',
      reason: 'nothing-to-commit',
      deferred: [{ sessionId: 's', turn: 1, paths: ['agent.txt'] }],
    });
    // No lock, no journal: only entity-git's record of the agent commit it made (the undo's proof).
    expect((await fsp.readdir(lockDir)).map((n) => n.replace(/^[0-9a-f]{32}\./, 'KEY.'))).toEqual([
      'KEY.agent-commits.jsonl',
    ]);
  });
});
