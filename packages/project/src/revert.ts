// The undo of an agent turn (docs/project-git.md, "Undo"), run by every engine through the seam:
// find the agent commit, read what the decision needs, decide (decision.ts), then have the engine
// move the branch and restore exactly the commit's paths. Under the project's lock, like a turn.
import { EntityGitError, isEntityGitError, isOid } from '@entity-git/git';
import { assertId } from '@entity-git/core';
import { lockKey, repoRefusal } from './decision.js';
import { requireWorkdir } from './input.js';
import type { WorkdirState } from './project-git-engine.js';
import { agentCommitFinder } from './revert-find.js';
import type { AgentCommitsInput, AgentCommitsResult, RevertInput, RevertResult } from '@entity-git/core';
import { refused, short, undo, type RevertContext, type RevertDeps } from './revert-undo.js';

/** Upper bound on attempts when the branch or a file moves between the decision and the undo. */
const ATTEMPTS = 4;

export type { RevertDeps } from './revert-undo.js';

class Retry extends Error {}

/** A state of the workdir in which there is no repository to undo anything in. */
function workdirRefusal(state: WorkdirState, workdir: string): never {
  const reasons = {
    missing: ['workdir-missing', `the project directory ${workdir} does not exist`],
    'not-a-directory': ['workdir-not-a-directory', `the project path ${workdir} is not a directory`],
    'not-a-repository': [
      'not-a-repository',
      `${workdir} is in no git repository: the agent has committed nothing there`,
    ],
    bare: ['bare-repository', `${workdir} is a bare repository (or inside a git directory): there is no working tree`],
  } as const;
  const [reason, message] = reasons[state.kind as keyof typeof reasons];
  throw new EntityGitError('REVERT_REFUSED', message, { reason, paths: [], workdir });
}

function validInput(input: RevertInput): {
  workdir: string;
  sessionId: string;
  turn: number | null;
  commit: string | null;
} {
  if (typeof input !== 'object' || input === null)
    throw new EntityGitError('INVALID_OPTION', 'revertAgentTurn needs an input object');
  const workdir = requireWorkdir(input.workdir);
  assertId(input.sessionId, 'sessionId');
  const turn = input.turn ?? null;
  const commit = input.commit ?? null;
  if (turn !== null && (!Number.isSafeInteger(turn) || turn < 1))
    throw new EntityGitError('INVALID_OPTION', `turn must be a positive integer: ${String(turn)}`);
  if (commit !== null && !isOid(commit))
    throw new EntityGitError('INVALID_OPTION', `commit must be 40 lowercase hex digits: ${JSON.stringify(commit)}`);
  if (turn === null && commit === null)
    throw new EntityGitError('INVALID_OPTION', 'revertAgentTurn needs a turn or a commit');
  return { workdir, sessionId: input.sessionId, turn, commit };
}

/** The undo of agent turns and the list of a session's agent commits, over one context. */
export function agentTurnReverts(deps: RevertDeps) {
  const ctx: RevertContext = Object.freeze({
    ...deps,
    finder: agentCommitFinder(deps.engine, deps.product, deps.ledger),
  });
  return {
    revertAgentTurn: (input: RevertInput) => revertAgentTurn(ctx, input),
    agentCommits: (input: AgentCommitsInput) => agentCommits(ctx, input),
  };
}

/** One look at the workdir and, under its lock, the agent commit located and taken back. */
async function attempt(ctx: RevertContext, want: ReturnType<typeof validInput>): Promise<RevertResult> {
  const { engine } = ctx;
  const first = await engine.inspect(want.workdir);
  if (first.kind !== 'repository') workdirRefusal(first, want.workdir);
  const key = lockKey(first, want.workdir);
  return ctx.lock(key, async () => {
    const state = await engine.inspect(want.workdir);
    if (lockKey(state, want.workdir) !== key) throw new Retry();
    if (state.kind !== 'repository') return workdirRefusal(state, want.workdir);
    const repo = state.repo;
    const before = repoRefusal(repo, engine.name);
    if (before !== null) return refused(before);
    // An earlier agent commit (or undo) whose process died after its branch moved gets its index entries first.
    const j = await ctx.openJournal(repo.root);
    await ctx.finishInFlight(repo, j);
    if (repo.head === null)
      throw new EntityGitError('AGENT_COMMIT_NOT_FOUND', 'the branch has no commit yet', { branch: repo.branch });
    const { found, above, resetBy } = await ctx.finder.locate(repo, want);
    const base = {
      sessionId: want.sessionId,
      turn: found.facts.turn,
      commit: found.record.id,
      branch: repo.branch!,
    };
    if (resetBy)
      return Object.freeze({
        ...base,
        kind: 'already-reverted' as const,
        by: 'reset' as const,
        revertCommit: null,
        paths: [],
        message: `The agent's edits of turn ${base.turn} were already undone: ${short(base.commit)} is no longer on the branch (an undo moved it back).`,
      });
    return undo(ctx, { repo, j, base }, { found, above });
  });
}

/**
 * Take back what the agent committed for a turn. Resolves how (`reset`, `reverted`) or that it
 * was done before (`already-reverted`); a refusal throws, with nothing touched: `NOT_AGENT_COMMIT`,
 * `AGENT_COMMIT_NOT_FOUND`, `COMMIT_NOT_FOUND`, `REVERT_CONFLICT`, `REVERT_REFUSED` (`data.reason`).
 */
async function revertAgentTurn(ctx: RevertContext, input: RevertInput): Promise<RevertResult> {
  const want = validInput(input);
  for (let n = 1; ; n++) {
    try {
      return await attempt(ctx, want);
    } catch (err) {
      // Someone's git holds `index.lock` or the branch's lock: the engines write nothing then.
      if (isEntityGitError(err, 'REF_LOCKED') && err.data.committed !== true) {
        const what = typeof err.data.lock === 'string' ? err.data.lock : 'a lock file';
        throw new EntityGitError(
          'REVERT_REFUSED',
          `another git is using the repository (${what} exists): nothing was undone`,
          { reason: 'repository-locked', paths: [], lock: err.data.lock ?? null },
          { cause: err },
        );
      }
      const moved =
        err instanceof Retry || isEntityGitError(err, 'REF_CONFLICT') || isEntityGitError(err, 'WORKTREE_CHANGED');
      if (!moved) throw err;
      if (n >= ATTEMPTS) {
        if (err instanceof Retry)
          throw new EntityGitError(
            'PROJECT_GIT_ERROR',
            `[${ctx.engine.name}] ${want.workdir} kept changing during the undo`,
            {
              workdir: want.workdir,
            },
          );
        throw err;
      }
    }
  }
}

/** The session's agent commits in the project (read-only): on the current branch, then those an undo moved it back over. */
async function agentCommits(ctx: RevertContext, input: AgentCommitsInput): Promise<AgentCommitsResult> {
  if (typeof input !== 'object' || input === null)
    throw new EntityGitError('INVALID_OPTION', 'agentCommits needs an input object');
  const workdir = requireWorkdir(input.workdir);
  assertId(input.sessionId, 'sessionId');
  const limit = input.limit ?? 100;
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new EntityGitError('INVALID_OPTION', `limit must be a positive integer: ${String(limit)}`);
  const state = await ctx.engine.inspect(workdir);
  if (state.kind !== 'repository' || state.repo.branch === null || state.repo.unsupported !== null)
    return Object.freeze({ branch: state.kind === 'repository' ? state.repo.branch : null, commits: [] });
  return Object.freeze({
    branch: state.repo.branch,
    commits: Object.freeze(await ctx.finder.list(state.repo, input.sessionId, limit)),
  });
}
