// A user's project with a hostile git config (a cloned repository, or a link an agent followed
// into .git): the auto-commit's and the undo's git calls run none of its commands — no hook (in
// .git/hooks or core.hooksPath), no core.fsmonitor, no pager, no editor. Each is a command that
// leaves a marker file; none may appear.
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createProjectGit } from '@entity-git/project';
import { nativeGitEngine } from '@entity-git/project/node';
import { describe, expect, it } from 'vitest';
import { isolateGit, judge } from './judge.js';

isolateGit();

const HOOKS = [
  'pre-commit',
  'commit-msg',
  'post-commit',
  'reference-transaction',
  'post-index-change',
  'pre-auto-gc',
  'post-rewrite',
  'post-checkout',
  'fsmonitor-watchman',
];

/** A repository whose config and hooks each run `touch <markers>/<name>`. */
async function hostileRepo(): Promise<{ dir: string; markers: string }> {
  const dir = await judge.tempDir();
  // The hostile scripts live outside the work tree: an untracked file would make the tree dirty.
  const outside = await judge.tempDir();
  const markers = join(outside, 'ran');
  mkdirSync(markers);
  await judge.git(dir, 'init', '-q', '-b', 'main');
  await judge.write(`${dir}/a.txt`, 'a\n');
  await judge.git(dir, 'add', '-A');
  await judge.git(dir, 'commit', '-q', '-m', 'initial');
  const script = (name: string) => `#!/bin/sh\ntouch "${markers}/${name}"\ncat >/dev/null 2>&1 || true\n`;
  const hooksPath = join(outside, 'evil-hooks');
  mkdirSync(hooksPath);
  for (const hook of HOOKS) {
    for (const [where, tag] of [
      [join(dir, '.git', 'hooks'), 'git-hooks'],
      [hooksPath, 'hooksPath'],
    ] as const) {
      writeFileSync(join(where, hook), script(`${tag}-${hook}`));
      chmodSync(join(where, hook), 0o755);
    }
  }
  const fsmonitor = join(outside, 'evil-fsmonitor.sh');
  writeFileSync(fsmonitor, script('fsmonitor'));
  chmodSync(fsmonitor, 0o755);
  for (const [key, value] of [
    ['core.hooksPath', hooksPath],
    ['core.fsmonitor', fsmonitor],
    ['core.pager', `touch "${markers}/pager"; cat`],
    ['pager.log', `touch "${markers}/pager-log"; cat`],
    ['core.editor', `touch "${markers}/editor"; true`],
    ['sequence.editor', `touch "${markers}/sequence-editor"; true`],
  ])
    await judge.git(dir, 'config', key, value);
  // The judge's own git ran with the user's config: forget what it may have run while setting up.
  for (const f of readdirSync(markers)) await judge.remove(join(markers, f));
  return { dir, markers };
}

describe('a hostile .git/config and hooks (native engine)', () => {
  it('a committed turn, the list of agent commits and the undo run none of its commands', async () => {
    const { dir, markers } = await hostileRepo();
    const pg = createProjectGit({ engine: nativeGitEngine() });
    const snapshot = await pg.beforeTurn(dir);
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
    expect(r).toMatchObject({ status: 'committed' });
    expect((await pg.agentCommits({ workdir: dir, sessionId: 's' })).commits).toHaveLength(1);
    expect(await pg.revertAgentTurn({ workdir: dir, sessionId: 's', turn: 1 })).toMatchObject({ kind: 'reset' });
    expect(existsSync(join(dir, 'agent.txt'))).toBe(false);
    expect(readdirSync(markers)).toEqual([]);
  });

  it('a turn skipped on a dirty tree (status only) runs none either', async () => {
    const { dir, markers } = await hostileRepo();
    const pg = createProjectGit({ engine: nativeGitEngine() });
    await judge.write(`${dir}/a.txt`, 'the user edits\n');
    const snapshot = await pg.beforeTurn(dir);
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
    expect(r.status).toBe('skipped');
    expect(readdirSync(markers)).toEqual([]);
  });
});
