import { EntityGitError } from '@entity-git/git';
import { OPERATION_NAMES, OPERATION_ORDER, lockKey, skip } from './decision.js';
import type { Turn } from './input.js';
import type { Journal } from './journal.js';
import { toRepoPath } from './paths.js';
import type { ProjectGitContext } from './project-git-context.js';
import type { RepoState, WorkdirState } from './project-git-engine.js';
import type { AfterTurnResult, RecoveredCommit } from '@entity-git/core';

/** The workdir changed between the first look and taking its lock: look again. */
export class Retry extends Error {}

/** A repository a turn's edits can be committed into, with its journal open. */
export interface OpenRepository {
  readonly repo: RepoState;
  readonly j: Journal;
}

/**
 * Under the lock of `key`: the workdir's repository (made on the agent's first edit when there is
 * none), its interrupted agent commits finished into `recovered`, or the skip that stops the turn.
 */
export async function openRepository(
  ctx: ProjectGitContext,
  t: Turn,
  key: string,
  recovered: RecoveredCommit[],
): Promise<AfterTurnResult | OpenRepository> {
  const { engine } = ctx;
  let state = await engine.inspect(t.workdir);
  if (lockKey(state, t.workdir) !== key) throw new Retry();
  if (state.kind === 'missing' || state.kind === 'not-a-directory') throw new Retry();
  if (state.kind === 'not-a-repository') {
    const made = await initRepository(ctx, t);
    if ('status' in made) return made;
    state = made;
  }
  if (state.kind === 'bare')
    return skip(
      'bare-repository',
      `the project directory is a bare repository (or inside a git directory): there is no working tree to commit, the agent's edits won't be auto-committed`,
    );
  const repo = state.repo;
  if (repo.unsupported !== null)
    return skip(
      'unsupported-repository',
      `${engine.name} cannot commit safely into this repository (${repo.unsupported}), the agent's edits won't be auto-committed`,
    );
  // Before anything is looked at: an earlier agent commit whose process died after its branch moved gets its index entries.
  const j = await ctx.openJournal(repo.root);
  recovered.push(...(await ctx.finishInFlight(repo, j)));
  const op = OPERATION_ORDER.find((o) => repo.operations.includes(o));
  if (op)
    return skip(
      `${op}-in-progress`,
      `${OPERATION_NAMES[op]} is in progress, the agent's edits won't be auto-committed until it is finished`,
    );
  if (repo.branch === null)
    return skip(
      'detached-head',
      `HEAD is detached, the agent's edits won't be auto-committed until a branch is checked out`,
    );
  return { repo, j };
}

/** A workdir with no repository: `git init` when the turn edited inside it, else nothing to commit. */
async function initRepository(
  ctx: ProjectGitContext,
  t: Turn,
): Promise<AfterTurnResult | Extract<WorkdirState, { kind: 'repository' }>> {
  const inside = t.touched.map((p) => toRepoPath(p, t.workdir, t.workdir, '')).filter((p): p is string => p !== null);
  // No edit, no repository: a project directory becomes one on the agent's first commit.
  if (inside.length === 0)
    return Object.freeze({
      status: 'skipped' as const,
      reason: 'nothing-to-commit' as const,
      warning: null,
      deferred: [],
      ignoredPaths: [...t.touched],
    });
  await ctx.engine.init(t.workdir, ctx.initOptions);
  const state = await ctx.engine.inspect(t.workdir);
  if (state.kind !== 'repository')
    throw new EntityGitError(
      'PROJECT_GIT_ERROR',
      `[${ctx.engine.name}] ${t.workdir} is still no repository after init`,
      {
        workdir: t.workdir,
        state: state.kind,
      },
    );
  return state;
}
