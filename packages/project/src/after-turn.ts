import { EntityGitError, isEntityGitError } from '@entity-git/git';
import { lockKey, skip } from './decision.js';
import { validTurn, type Turn } from './input.js';
import type { ProjectGitContext } from './project-git-context.js';
import type { AfterTurnInput, AfterTurnResult, RecoveredCommit } from '@entity-git/core';
import { commitTurn, type Seen } from './turn-commit.js';
import { openRepository, Retry } from './turn-repository.js';

/** Upper bound on attempts when the branch or a file moves between the decision and the commit. */
const ATTEMPTS = 4;

const withRecovered = (result: AfterTurnResult, recovered: RecoveredCommit[]): AfterTurnResult =>
  recovered.length === 0 ? result : Object.freeze({ ...result, recovered: Object.freeze([...recovered]) });

/** Commit the agent's edits of a turn when that is safe (see {@link ProjectGit.afterTurn}), looking again when something moves. */
export async function afterTurn(ctx: ProjectGitContext, input: AfterTurnInput): Promise<AfterTurnResult> {
  const t = validTurn(input);
  const recovered: RecoveredCommit[] = [];
  for (let n = 1; ; n++) {
    const seen: Seen = { mine: [], ignored: [] };
    try {
      return withRecovered(await attempt(ctx, t, recovered, seen), recovered);
    } catch (err) {
      // Someone's git holds `index.lock` or the branch's lock (an amend whose editor is open, or a
      // lock a killed git left): the engines move nothing then, so this is a skip, not a failure.
      if (isEntityGitError(err, 'REF_LOCKED') && err.data.committed !== true) {
        const what = typeof err.data.lock === 'string' ? err.data.lock : 'a lock file';
        const result = skip(
          'repository-locked',
          `another git is using the repository (${what} exists), the agent's edits won't be auto-committed for now`,
          { agentPaths: [...seen.mine], ignoredPaths: [...seen.ignored] },
        );
        return withRecovered(result, recovered);
      }
      // The branch, a file or the repository itself moved between looking and committing: look again.
      const moved =
        err instanceof Retry || isEntityGitError(err, 'REF_CONFLICT') || isEntityGitError(err, 'WORKTREE_CHANGED');
      if (!moved) throw err;
      if (n >= ATTEMPTS) {
        if (err instanceof Retry)
          throw new EntityGitError(
            'PROJECT_GIT_ERROR',
            `[${ctx.engine.name}] ${t.workdir} kept changing while the agent's commit was prepared`,
            { workdir: t.workdir },
          );
        throw err;
      }
    }
  }
}

/** One look at the workdir and, under its lock, the decision and the commits it allows. */
async function attempt(
  ctx: ProjectGitContext,
  t: Turn,
  recovered: RecoveredCommit[],
  seen: Seen,
): Promise<AfterTurnResult> {
  const first = await ctx.engine.inspect(t.workdir);
  if (first.kind === 'missing')
    return skip(
      'workdir-missing',
      `the project directory ${t.workdir} does not exist, the agent's edits won't be auto-committed`,
    );
  if (first.kind === 'not-a-directory')
    return skip(
      'workdir-not-a-directory',
      `the project path ${t.workdir} is not a directory, the agent's edits won't be auto-committed`,
    );
  const key = lockKey(first, t.workdir);
  return ctx.lock(key, async () => {
    const opened = await openRepository(ctx, t, key, recovered);
    return 'status' in opened ? opened : commitTurn(ctx, t, opened, { recovered, seen });
  });
}
