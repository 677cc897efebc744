// The user's own git holding its locks while an agent's turn ends (issue #26, item 1): the native
// engine must hold `index.lock` around its whole commit, move nothing when someone else holds it,
// and report a skip with a reason. Judged with native git: the branch tip, the user's amend and
// `git status` afterwards.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { createObjectEngine, createProjectGit, type ProjectGitEngine } from '@entity-git/project';
import { nativeGitEngine } from '@entity-git/project/node';
import { nodeStorage } from '@entity-git/node-fs';
import { describe, expect, it } from 'vitest';
import { isolateGit, judge } from './judge.js';

isolateGit();

async function repo(): Promise<string> {
  const dir = await judge.tempDir();
  await judge.git(dir, 'init', '-q', '-b', 'main');
  await judge.write(`${dir}/a.txt`, 'a\n');
  await judge.git(dir, 'add', '-A');
  await judge.git(dir, 'commit', '-q', '-m', 'initial');
  await judge.write(`${dir}/b.txt`, 'b\n');
  await judge.git(dir, 'add', '-A');
  await judge.git(dir, 'commit', '-q', '-m', 'second, to be reworded');
  return dir;
}

const head = async (dir: string) => (await judge.git(dir, 'rev-parse', 'HEAD')).trim();

/** Poll (bounded) until `path` exists. */
async function waitFor(path: string): Promise<void> {
  for (let i = 0; i < 6000 && !existsSync(path); i++) await new Promise((r) => setTimeout(r, 10));
  if (!existsSync(path)) throw new Error(`${path} never appeared`);
}

/**
 * `git commit -a --amend` with its editor open: the editor (a shell script) says it is open, then
 * waits for a go file, then writes the new message. Git holds `index.lock` all that time.
 */
async function openAmend(dir: string): Promise<{ save: () => Promise<{ code: number; stderr: string }> }> {
  const ctl = await judge.tempDir();
  const editor = join(ctl, 'editor.sh');
  await fsp.writeFile(
    editor,
    `#!/bin/sh\n: > "${ctl}/open"\nwhile [ ! -e "${ctl}/go" ]; do sleep 0.05; done\nprintf 'reworded by the user\\n' > "$1"\n`,
    { mode: 0o755 },
  );
  const child = spawn('git', ['commit', '-a', '--amend', '-q'], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      ...process.env,
      GIT_EDITOR: editor,
      GIT_AUTHOR_NAME: 'User',
      GIT_AUTHOR_EMAIL: 'user@example.com',
      GIT_COMMITTER_NAME: 'User',
      GIT_COMMITTER_EMAIL: 'user@example.com',
    },
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number>((r) => child.on('close', (code) => r(code ?? -1)));
  await waitFor(join(ctl, 'open'));
  return {
    save: async () => {
      await fsp.writeFile(join(ctl, 'go'), '');
      return { code: await exited, stderr };
    },
  };
}

const engines: Array<[string, ProjectGitEngine]> = [
  ['native git', nativeGitEngine({ indexLockTimeoutMs: 300 })],
  ['object', createObjectEngine({ storage: nodeStorage(), lockTimeoutMs: 300 })],
];

for (const [name, engine] of engines) {
  describe(`the user's git holds its locks when a turn ends (${name} engine)`, () => {
    it("an open `git commit --amend`: the turn is skipped as repository-locked, nothing moves, and the user's amend lands", async () => {
      const dir = await repo();
      const old = await head(dir);
      const pg = createProjectGit({ engine });
      const snapshot = await pg.beforeTurn(dir);
      const amend = await openAmend(dir);
      let r;
      let tip;
      let saved: { code: number; stderr: string };
      try {
        await judge.write(`${dir}/agent.txt`, 'by the agent\n');
        r = await pg.afterTurn({
          workdir: dir,
          sessionId: 's',
          turn: 1,
          userMessage: 'x',
          model: 'm',
          touchedPaths: ['agent.txt'],
          snapshot,
        });
        tip = await head(dir);
      } finally {
        // The user saves in any case: no git process outlives the test.
        saved = await amend.save();
      }
      expect(r).toMatchObject({
        status: 'skipped',
        reason: 'repository-locked',
        agentPaths: ['agent.txt'],
        warning: expect.stringContaining('index.lock'),
      });
      expect(tip).toBe(old);
      expect(saved.stderr).toBe('');
      expect(saved.code).toBe(0);
      // The user's reword is HEAD, on the same parent; the agent's file is left untracked, nothing staged or deleted.
      expect(await judge.git(dir, 'log', '-1', '--format=%s')).toBe('reworded by the user\n');
      expect((await judge.git(dir, 'rev-parse', 'HEAD^')).trim()).toBe(
        (await judge.git(dir, 'rev-parse', `${old}^`)).trim(),
      );
      expect(await judge.git(dir, 'status', '--porcelain')).toBe('?? agent.txt\n');
      expect(await judge.git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    });

    it('an index.lock left behind: skipped as repository-locked, the branch and the index untouched; once removed, status shows only the agent file untracked and the next turn commits it', async () => {
      const dir = await repo();
      const old = await head(dir);
      const index = await fsp.readFile(join(dir, '.git/index'));
      const pg = createProjectGit({ engine });
      const snapshot = await pg.beforeTurn(dir);
      await fsp.writeFile(join(dir, '.git/index.lock'), '');
      await judge.write(`${dir}/agent.txt`, 'by the agent\n');
      const r = await pg.afterTurn({
        workdir: dir,
        sessionId: 's',
        turn: 1,
        userMessage: 'x',
        model: 'm',
        touchedPaths: ['agent.txt'],
        snapshot,
      });
      expect(r).toMatchObject({ status: 'skipped', reason: 'repository-locked', agentPaths: ['agent.txt'] });
      expect(await head(dir)).toBe(old);
      expect(await fsp.readFile(join(dir, '.git/index'))).toEqual(index);
      expect(await fsp.readFile(join(dir, '.git/index.lock'), 'utf8')).toBe('');
      await fsp.rm(join(dir, '.git/index.lock'));
      expect(await judge.git(dir, 'status', '--porcelain')).toBe('?? agent.txt\n');
      // The same turn again, the lock gone: committed on top of the user's tip.
      const again = await pg.afterTurn({
        workdir: dir,
        sessionId: 's',
        turn: 1,
        userMessage: 'x',
        model: 'm',
        touchedPaths: ['agent.txt'],
        snapshot,
      });
      expect(again).toMatchObject({ status: 'committed', paths: ['agent.txt'] });
      expect((await judge.git(dir, 'rev-parse', 'HEAD^')).trim()).toBe(old);
      expect(await judge.git(dir, 'status', '--porcelain')).toBe('');
      expect(await judge.git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    });

    it("a branch's lock left behind (a git killed in `update-ref`): skipped, the warning names the lock to remove; once removed, the turn commits", async () => {
      const dir = await repo();
      const old = await head(dir);
      const pg = createProjectGit({ engine });
      const turn = { workdir: dir, sessionId: 's', turn: 1, userMessage: 'x', model: 'm', touchedPaths: ['agent.txt'] };
      const snapshot = await pg.beforeTurn(dir);
      const lock = join(dir, '.git/refs/heads/main.lock');
      await fsp.writeFile(lock, '');
      await judge.write(`${dir}/agent.txt`, 'by the agent\n');
      const r = await pg.afterTurn({ ...turn, snapshot });
      expect(r).toMatchObject({ status: 'skipped', reason: 'repository-locked', agentPaths: ['agent.txt'] });
      expect(r.status === 'skipped' && r.warning).toBe(
        `another git is using the repository (${lock} exists), the agent's edits won't be auto-committed for now`,
      );
      expect(await head(dir)).toBe(old);
      await fsp.rm(lock);
      expect(await judge.git(dir, 'status', '--porcelain')).toBe('?? agent.txt\n');
      expect(await pg.afterTurn({ ...turn, snapshot })).toMatchObject({ status: 'committed', paths: ['agent.txt'] });
      expect((await judge.git(dir, 'rev-parse', 'HEAD^')).trim()).toBe(old);
      expect(await judge.git(dir, 'status', '--porcelain')).toBe('');
    });
  });
}
