import type { ProjectGit, RevertInput } from '@entity-git/core';
import { describe, expect, it } from 'vitest';
import type { ProjectGitJudge, SuiteContext } from './context.js';
import { revertContext } from './revert-context.js';

/** An undo that cannot be done safely is refused with a typed error, and nothing at all under the project changes. */
export function revertRefusalTests(c: SuiteContext): void {
  describe('an undo that cannot be done safely is refused, touching nothing', () => {
    userWorkRefusalTests(c);
    targetRefusalTests(c);
  });
}

/** The user’s work in the way: a conflict, a dirty path the undo restores, git’s own lock. */
function userWorkRefusalTests(c: SuiteContext): void {
  const { j } = c;
  const { withAgentTurn } = revertContext(c);
  const refused = refusalCheck(j);
  it('a conflict: the user changed the agent’s file since', async () => {
    const { dir, pg } = await withAgentTurn();
    await j.write(`${dir}/src/main.ts`, 'export const x = 3; // the user, later\n');
    await j.git(dir, 'commit', '-q', '-am', 'the user edits the agent’s file');
    await refused(pg, dir, { sessionId: 'sess-1', turn: 7 }, 'REVERT_CONFLICT', {
      reason: 'conflict',
      paths: ['src/main.ts'],
    });
  });

  it('a dirty tree on a path the undo restores: unstaged, staged, or an ignored file where a removed one would return', async () => {
    const { dir, pg } = await withAgentTurn();
    await j.write(`${dir}/src/main.ts`, 'export const x = 2; // the user is typing\n');
    await refused(pg, dir, { sessionId: 'sess-1', turn: 7 }, 'REVERT_REFUSED', {
      reason: 'uncommitted-changes',
      paths: ['src/main.ts'],
    });
    await j.git(dir, 'add', 'src/main.ts');
    await refused(pg, dir, { sessionId: 'sess-1', turn: 7 }, 'REVERT_REFUSED', { reason: 'uncommitted-changes' });

    // The agent removed old.txt; the user ignores that name now and keeps a file of their own there.
    const other = await withAgentTurn();
    await j.write(`${other.dir}/.git/info/exclude`, 'old.txt\n');
    await j.write(`${other.dir}/old.txt`, 'an ignored file of the user’s\n');
    expect(await c.porcelain(other.dir)).toBe('');
    await refused(other.pg, other.dir, { sessionId: 'sess-1', turn: 7 }, 'REVERT_REFUSED', {
      reason: 'uncommitted-changes',
      paths: ['old.txt'],
    });
  });

  it('the user’s git holds index.lock', async () => {
    const { dir, pg } = await withAgentTurn();
    await j.write(`${dir}/.git/index.lock`, '');
    await refused(pg, dir, { sessionId: 'sess-1', turn: 7 }, 'REVERT_REFUSED', { reason: 'repository-locked' });
    await j.remove(`${dir}/.git/index.lock`);
  });
}

/** What the undo names or finds is not the agent’s turn to take back: another commit, a state of git, bad input. */
function targetRefusalTests(c: SuiteContext): void {
  const { j, repo, projectGit } = c;
  const { agentTurn, withAgentTurn } = revertContext(c);
  const refused = refusalCheck(j);
  it('a user’s commit named, another session’s, another turn’s, or one that does not exist', async () => {
    const { dir, pg, before, agent } = await withAgentTurn();
    await refused(pg, dir, { sessionId: 'sess-1', commit: before }, 'NOT_AGENT_COMMIT');
    await refused(pg, dir, { sessionId: 'sess-2', commit: agent }, 'NOT_AGENT_COMMIT');
    await refused(pg, dir, { sessionId: 'sess-1', turn: 6, commit: agent }, 'NOT_AGENT_COMMIT');
    await refused(pg, dir, { sessionId: 'sess-1', turn: 6 }, 'AGENT_COMMIT_NOT_FOUND');
    await refused(pg, dir, { sessionId: 'sess-1', commit: 'f'.repeat(40) }, 'COMMIT_NOT_FOUND');
    // A user's commit forged to look like the agent's subject, but not committed as the agent.
    await j.git(dir, 'commit', '-q', '--allow-empty', '-m', '[agent sess-1] turn 8: x\n\nSession: sess-1\nTurn: 8');
    await refused(pg, dir, { sessionId: 'sess-1', turn: 8 }, 'AGENT_COMMIT_NOT_FOUND');
  });

  it('a merge in progress, a detached HEAD', async () => {
    const dir = await repo();
    const pg = projectGit();
    await j.git(dir, 'checkout', '-q', '-b', 'side');
    await j.write(`${dir}/side.txt`, 's\n');
    await j.git(dir, 'add', '-A');
    await j.git(dir, 'commit', '-q', '-m', 'side');
    await j.git(dir, 'checkout', '-q', 'main');
    await agentTurn(pg, dir, { 'agent.txt': 'agent\n' });
    await j.git(dir, 'merge', '--no-commit', '--no-ff', 'side');
    await refused(pg, dir, { sessionId: 'sess-1', turn: 7 }, 'REVERT_REFUSED', { reason: 'merge-in-progress' });
    await j.git(dir, 'merge', '--abort');
    await j.git(dir, 'checkout', '-q', '--detach');
    await refused(pg, dir, { sessionId: 'sess-1', turn: 7 }, 'REVERT_REFUSED', { reason: 'detached-head' });
  });

  it('bad input: a typed error before anything is looked at', async () => {
    const dir = await repo();
    const pg = projectGit();
    await refused(pg, dir, { sessionId: 'sess-1' }, 'INVALID_OPTION');
    await refused(pg, dir, { sessionId: 'sess-1', turn: 0 }, 'INVALID_OPTION');
    await refused(pg, dir, { sessionId: 'sess-1', commit: 'HEAD' }, 'INVALID_OPTION');
    await refused(pg, dir, { sessionId: '', turn: 1 }, 'INVALID_ID');
    await expect(pg.revertAgentTurn({ workdir: 'relative', sessionId: 's', turn: 1 })).rejects.toMatchObject({
      code: 'INVALID_WORKDIR',
    });
    const plain = await j.tempDir();
    await refused(pg, plain, { sessionId: 'sess-1', turn: 1 }, 'REVERT_REFUSED', { reason: 'not-a-repository' });
  });
}

/**
 * The check these tests make: `revertAgentTurn(input)` rejects with `code` (and `data` matching),
 * every byte, mode and mtime under `dir` as before.
 */
function refusalCheck(j: ProjectGitJudge) {
  return async function refused(
    pg: ProjectGit,
    dir: string,
    input: Omit<RevertInput, 'workdir'>,
    code: string,
    data: Record<string, unknown> = {},
  ): Promise<void> {
    const before = await j.fingerprint(dir);
    await expect(pg.revertAgentTurn({ workdir: dir, ...input })).rejects.toMatchObject({ code, data });
    expect(await j.fingerprint(dir)).toBe(before);
  };
}
