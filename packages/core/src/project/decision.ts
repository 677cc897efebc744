import type { PendingEdit } from './project-coordination.js';
import type { ChangedPath, FileState, RepoOperation, RepoState, WorkdirState } from './project-git-engine.js';
import type { SkippedResult, SkipReason } from './project-git-types.js';
import type { Turn } from './input.js';
import { within } from './paths.js';

// The pure part of the decision: no engine, no file system, no clock — only values in, values out.

export const OPERATION_ORDER: readonly RepoOperation[] = ['rebase', 'am', 'merge', 'cherry-pick', 'revert', 'bisect'];
export const OPERATION_NAMES: Record<RepoOperation, string> = {
  rebase: 'a rebase',
  am: 'a `git am` session',
  merge: 'a merge',
  'cherry-pick': 'a cherry-pick',
  revert: 'a revert',
  bisect: 'a bisect',
};

export function lockKey(state: WorkdirState, workdir: string): string {
  if (state.kind === 'repository') return state.repo.root;
  if (state.kind === 'bare') return state.gitdir;
  return workdir;
}

export const sameFile = (a: FileState, b: FileState) => a.oid === b.oid;

/** For each path, the newest pending edit whose recorded bytes it still holds. */
export const ownersOf = (pending: readonly PendingEdit[], current: Map<string, FileState>): Map<string, number> => {
  const owners = new Map<string, number>();
  pending.forEach((e, i) => {
    for (const f of e.files) {
      const now = current.get(f.path);
      if (now && sameFile(now, f)) owners.set(f.path, i);
    }
  });
  return owners;
};

export const skip = (
  reason: Exclude<SkipReason, 'nothing-to-commit'>,
  warning: string,
  extra: Partial<Pick<SkippedResult, 'userPaths' | 'agentPaths' | 'ignoredPaths' | 'deferred'>> = {},
): SkippedResult =>
  Object.freeze({
    status: 'skipped' as const,
    reason,
    warning,
    userPaths: [],
    agentPaths: [],
    deferred: [],
    ignoredPaths: [],
    ...extra,
  });

/** The user's paths before the turn (`user`, with everything below them) and the dirty paths that were an agent's pending edit (`agent`). */
export interface UserBefore {
  user: readonly string[];
  agent: ReadonlySet<string>;
}

/** The user's paths before the turn, relative to `repo`; null when the snapshot cannot say. */
export function userBefore(t: Turn, repo: RepoState): { user: readonly string[]; agent: ReadonlySet<string> } | null {
  const s = t.snapshot;
  if (s === null) return null;
  if (s.root === repo.root) return { user: s.dirty, agent: new Set(s.agentDirty) };
  // A directory that had no repository: everything in it then was the user's.
  if (s.root === null && s.state === 'not-a-repository')
    return { user: s.dirty.map((e) => (repo.prefix === '' ? e : `${repo.prefix}/${e}`)), agent: new Set() };
  if (s.root === null && s.state === 'missing') return { user: [], agent: new Set() };
  return null;
}

/** The changes of a turn sorted out: the agent's, the rest, and submodules the agent edited inside. */
export interface Classified {
  /** Changed paths the agent touched this turn that were not the user's before it. */
  mine: string[];
  /** Every other change: the user's, unless a pending edit owns it. */
  others: ChangedPath[];
  /** Submodules with a touched path inside them. */
  inSubmodules: string[];
}

/**
 * Which of `changes` are the agent's (`touched` by the turn, neither conflicted nor a submodule,
 * and not the user's before the turn), which are not, and which submodules the agent edited
 * inside. A path is the user's before the turn when the recovery of an interrupted commit left it
 * `staged`, or when `before` names it (or a directory above it) and not as an agent's pending edit.
 */
export function classify(
  changes: readonly ChangedPath[],
  touched: ReadonlySet<string>,
  before: UserBefore | null,
  staged: ReadonlySet<string>,
): Classified {
  const wasUsers = (p: string) =>
    staged.has(p) || (before !== null && !before.agent.has(p) && before.user.some((e) => within(p, e)));

  const mine: string[] = [];
  const others: ChangedPath[] = [];
  const inSubmodules: string[] = [];
  for (const c of changes) {
    if (c.submodule && [...touched].some((p) => p !== c.path && within(p, c.path))) inSubmodules.push(c.path);
    else if (!c.conflicted && !c.submodule && touched.has(c.path) && !wasUsers(c.path)) mine.push(c.path);
    else others.push(c);
  }
  return { mine, others, inSubmodules };
}
