// The undo acts only on a commit entity-git recorded making (its ledger), never on commit text
// anyone can write; and it moves the branch only by compare-and-swap, so a user's commit landing
// between the check and the move is never knocked off. Native git judges.
import { execFileSync } from 'node:child_process';
import { createProjectGit, projectCommitMessage, type ProjectGitEngine } from '@entity-git/project';
import { createNodeProjectGit, nativeGitEngine } from '@entity-git/project/node';
import { describe, expect, it } from 'vitest';
import { isolateGit, judge } from './judge.js';

isolateGit();

const AGENT = 'agent (m via OpenProgram)';

async function repoWithAgentTurn(pg: ReturnType<typeof createProjectGit>, turn = 1) {
  const dir = await judge.tempDir();
  await judge.git(dir, 'init', '-q', '-b', 'main');
  await judge.write(`${dir}/a.txt`, 'a\n');
  await judge.git(dir, 'add', '-A');
  await judge.git(dir, 'commit', '-q', '-m', 'initial');
  const snapshot = await pg.beforeTurn(dir);
  await judge.write(`${dir}/agent.txt`, 'by the agent\n');
  const r = await pg.afterTurn({
    workdir: dir,
    sessionId: 'demo',
    turn,
    userMessage: 'note it',
    model: 'm',
    touchedPaths: ['agent.txt'],
    snapshot,
  });
  expect(r.status).toBe('committed');
  return dir;
}

/** A commit the user's own git makes, dressed as the agent's commit of `turn`: the committer, the subject, the trailers. */
function forge(dir: string, turn: number, file: string): string {
  execFileSync('sh', ['-c', `echo forged > ${file}`], { cwd: dir });
  execFileSync('git', ['add', file], { cwd: dir });
  execFileSync('git', ['commit', '-q', '-m', projectCommitMessage('demo', turn, 'forged by hand', null)], {
    cwd: dir,
    env: {
      ...process.env,
      GIT_COMMITTER_NAME: AGENT,
      GIT_COMMITTER_EMAIL: 'agent@openprogram.invalid',
      GIT_AUTHOR_NAME: AGENT,
      GIT_AUTHOR_EMAIL: 'agent@openprogram.invalid',
    },
  });
  return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    (r) => `ok ${(r as { kind?: string }).kind}`,
    (err: { code?: string }) => err.code,
  );

describe('undo proof', () => {
  it('a commit forged with the agent’s name, subject and trailers is NOT_AGENT_COMMIT, by turn and by sha; the branch does not move', async () => {
    const state = await judge.tempDir();
    const pg = createNodeProjectGit({ dir: state, initialBranch: 'main' });
    const dir = await repoWithAgentTurn(pg, 1);
    const forged = forge(dir, 3, 'forged.txt');
    expect(execFileSync('git', ['log', '-1', '--format=%cn%n%B'], { cwd: dir, encoding: 'utf8' })).toContain(AGENT);
    expect(await codeOf(pg.revertAgentTurn({ workdir: dir, sessionId: 'demo', turn: 3 }))).toBe('NOT_AGENT_COMMIT');
    expect(await codeOf(pg.revertAgentTurn({ workdir: dir, sessionId: 'demo', commit: forged }))).toBe(
      'NOT_AGENT_COMMIT',
    );
    expect(await judge.git(dir, 'rev-parse', 'HEAD')).toBe(`${forged}\n`);
    // Listed: only the commit entity-git made. A second process (a new ProjectGit) reads the same record.
    const again = createNodeProjectGit({ dir: state, initialBranch: 'main' });
    expect((await again.agentCommits({ workdir: dir, sessionId: 'demo' })).commits.map((c) => c.turn)).toEqual([1]);
    // The real one is still undone (a revert: the forged commit sits above it).
    expect(await codeOf(again.revertAgentTurn({ workdir: dir, sessionId: 'demo', turn: 1 }))).toBe('ok reverted');
    expect(await judge.git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
  });

  it('a forged commit of a turn the agent did commit is passed over for the recorded one', async () => {
    const pg = createNodeProjectGit({ dir: await judge.tempDir(), initialBranch: 'main' });
    const dir = await repoWithAgentTurn(pg, 2);
    const real = (await judge.git(dir, 'rev-parse', 'HEAD')).trim();
    forge(dir, 2, 'forged.txt');
    const r = await pg.revertAgentTurn({ workdir: dir, sessionId: 'demo', turn: 2 });
    expect([r.kind, r.commit]).toEqual(['reverted', real]);
    expect(await judge.read(`${dir}/forged.txt`)).toBe('forged\n');
  });
});

describe('compare-and-swap', () => {
  it('a user commit landing between the undo’s check and its branch move is kept: the reset is refused by update-ref and the undo becomes a revert above it', async () => {
    let userCommit = '';
    const native = nativeGitEngine();
    // The real engine, with the user's git committing at the worst moment: after the decision, before the move.
    const racing: ProjectGitEngine = Object.create(native, {
      undo: {
        value: async (
          repo: Parameters<ProjectGitEngine['undo']>[0],
          request: Parameters<ProjectGitEngine['undo']>[1],
        ) => {
          if (userCommit === '') {
            await judge.write(`${repo.root}/user.txt`, 'the user’s work\n');
            await judge.git(repo.root, 'add', 'user.txt');
            await judge.git(repo.root, 'commit', '-q', '-m', 'the user commits meanwhile');
            userCommit = (await judge.git(repo.root, 'rev-parse', 'HEAD')).trim();
          }
          return native.undo(repo, request);
        },
      },
    });
    const pg = createProjectGit({ engine: racing, initialBranch: 'main' });
    const dir = await repoWithAgentTurn(pg, 1);
    const agent = (await judge.git(dir, 'rev-parse', 'HEAD')).trim();
    const r = await pg.revertAgentTurn({ workdir: dir, sessionId: 'demo', turn: 1 });
    expect(r.kind).toBe('reverted');
    expect((await judge.git(dir, 'rev-parse', 'HEAD^')).trim()).toBe(userCommit);
    expect((await judge.git(dir, 'rev-parse', 'HEAD^^')).trim()).toBe(agent);
    expect(await judge.read(`${dir}/user.txt`)).toBe('the user’s work\n');
    expect(await judge.git(dir, 'status', '--porcelain')).toBe('');
  });
});
