import { isEntityGitError } from '@entity-git/git';
import { lockKey, ownersOf } from './decision.js';
import { requireWorkdir } from './input.js';
import type { ProjectGitContext } from './project-git-context.js';
import type { RepoState, WorkdirState } from './project-git-engine.js';
import type { ProjectSnapshot } from '@entity-git/core';

/** What a snapshot records besides its time: a repository's `root` and `head` (else null), its dirty paths split by owner. */
interface SnapshotFacts {
  workdir: string;
  state: WorkdirState['kind'];
  root: string | null;
  head: string | null;
  dirty: string[];
  /** Dirty paths an agent's pending edit owns. Default none. */
  agentDirty?: string[];
}

/** A snapshot taken now, frozen. */
function snapshotOf(ctx: ProjectGitContext, facts: SnapshotFacts): ProjectSnapshot {
  const { workdir, root, state, head, dirty, agentDirty = [] } = facts;
  return Object.freeze({
    version: 1 as const,
    workdir,
    root,
    state,
    head,
    takenAt: ctx.now(),
    dirty: Object.freeze(dirty),
    agentDirty: Object.freeze(agentDirty),
  });
}

/** The snapshot of a workdir that holds no repository git can read (no root, no head). */
const outside = (
  ctx: ProjectGitContext,
  workdir: string,
  state: WorkdirState['kind'],
  dirty: string[] = [],
): ProjectSnapshot => snapshotOf(ctx, { workdir, state, root: null, head: null, dirty });

/** What is uncommitted in `workdirInput` before a turn (see {@link ProjectGit.beforeTurn}). */
export async function beforeTurn(ctx: ProjectGitContext, workdirInput: string): Promise<ProjectSnapshot> {
  const workdir = requireWorkdir(workdirInput);
  const first = await ctx.engine.inspect(workdir);
  if (first.kind === 'missing' || first.kind === 'not-a-directory') return outside(ctx, workdir, first.kind);
  return ctx.lock(lockKey(first, workdir), async () => {
    const state = await ctx.engine.inspect(workdir);
    if (state.kind === 'not-a-repository') return outside(ctx, workdir, state.kind, [...state.entries].sort());
    if (state.kind !== 'repository') return outside(ctx, workdir, state.kind);
    const { repo } = state;
    if (repo.unsupported !== null)
      return snapshotOf(ctx, { workdir, state: state.kind, root: repo.root, head: repo.head, dirty: [] });
    return repositorySnapshot(ctx, workdir, repo);
  });
}

/** The snapshot of a supported repository, under its lock: the dirty paths split into the user's and the agents' pending ones. */
async function repositorySnapshot(ctx: ProjectGitContext, workdir: string, repo: RepoState): Promise<ProjectSnapshot> {
  // The one write beforeTurn may make: finishing an interrupted agent commit, so its paths are not taken for the user's.
  // A lock file someone's git holds (or a killed one left) stops only that: the record waits for afterTurn, the snapshot is taken as things are (the agent's paths then count as the user's: the safe side).
  const j = await ctx.openJournal(repo.root);
  const recovered = await ctx.finishInFlight(repo, j).catch((err: unknown) => {
    if (isEntityGitError(err, 'REF_LOCKED')) return [];
    throw err;
  });
  const dirty = (await ctx.engine.status(repo)).map((c) => c.path);
  const pending = ctx.freshPending(j);
  const owners = ownersOf(pending, await ctx.currentOfPending(repo, dirty, pending));
  const taken = snapshotOf(ctx, {
    workdir,
    state: 'repository',
    root: repo.root,
    head: repo.head,
    dirty: dirty.filter((p) => !owners.has(p)),
    agentDirty: dirty.filter((p) => owners.has(p)),
  });
  return recovered.length === 0 ? taken : Object.freeze({ ...taken, recovered: Object.freeze(recovered) });
}
