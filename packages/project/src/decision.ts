import type { PendingEdit } from './project-coordination.js';
import type { ChangedPath, FileState, RepoOperation, RepoState, WorkdirState } from './project-git-engine.js';
import { sameEntry } from './project-git-engine.js';
import type { SkippedResult, SkipReason } from '@entity-git/core';
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

// The undo of an agent commit (docs/project-git.md, "Undo"): the same kind of pure decision.

/** Why an undo is refused before any commit is looked at (`REVERT_REFUSED`'s `data.reason`). */
export type RevertRefusalReason =
  | 'workdir-missing'
  | 'workdir-not-a-directory'
  | 'not-a-repository'
  | 'bare-repository'
  | 'unsupported-repository'
  | `${RepoOperation}-in-progress`
  | 'detached-head'
  | 'uncommitted-changes'
  | 'submodule-changes'
  | 'repository-locked';

export interface RevertRefusal {
  readonly code: 'REVERT_REFUSED' | 'REVERT_CONFLICT';
  readonly reason: RevertRefusalReason | 'conflict';
  readonly message: string;
  /** The paths the refusal is about (the user's changes, the conflicting paths); `[]` for a state of the repository. */
  readonly paths: readonly string[];
}

const refusal = (
  reason: RevertRefusalReason | 'conflict',
  message: string,
  paths: readonly string[] = [],
): RevertRefusal =>
  Object.freeze({ code: reason === 'conflict' ? 'REVERT_CONFLICT' : 'REVERT_REFUSED', reason, message, paths });

/** What in a repository's state forbids an undo (an unsupported repository, an operation in progress, a detached HEAD); null when nothing does. */
export function repoRefusal(repo: RepoState, engine: string): RevertRefusal | null {
  if (repo.unsupported !== null)
    return refusal('unsupported-repository', `${engine} cannot work safely on this repository (${repo.unsupported})`);
  const op = OPERATION_ORDER.find((o) => repo.operations.includes(o));
  if (op) return refusal(`${op}-in-progress`, `${OPERATION_NAMES[op]} is in progress: finish or abort it first`);
  if (repo.branch === null)
    return refusal('detached-head', 'HEAD is detached: check out the branch the agent committed on');
  return null;
}

/** One path the agent commit changed, as the undo finds it. */
export interface RevertPath {
  readonly path: string;
  /** In the agent commit's parent (what the undo restores). */
  readonly parent: FileState;
  /** In the agent commit. */
  readonly agent: FileState;
  /** In HEAD's tree now. */
  readonly head: FileState;
  /** In the working tree now (as `git add` would record it; an ignored file counts). */
  readonly worktree: FileState;
  /** `git status` lists an uncommitted change at this path, below it or above it (staged, unstaged, untracked, conflicted). */
  readonly dirty: boolean;
}

/** Everything the undo of one agent commit is decided on, read by the engine under the project lock. */
export interface RevertState {
  /** HEAD's commit. */
  readonly head: string;
  /** The agent commit. */
  readonly agent: string;
  /** Its parent; null for the first commit of its branch. */
  readonly parent: string | null;
  /** A commit on the branch above it that reverted it; null when none. */
  readonly revertedBy: string | null;
  /** Remote-tracking refs it is reachable from (read only when it is HEAD). */
  readonly onRemote: readonly string[];
  readonly paths: readonly RevertPath[];
  /** Nothing at all is uncommitted in the repository. */
  readonly clean: boolean;
}

export type RevertDecision =
  | { readonly kind: 'reset' | 'revert'; readonly entries: readonly FileState[]; readonly expect: readonly FileState[] }
  | { readonly kind: 'already-reverted'; readonly by: 'revert' | 'content'; readonly revertCommit: string | null }
  | ({ readonly kind: 'refused' } & RevertRefusal);

const GITLINK = '160000';

/**
 * How to take an agent commit back. Per path: HEAD still holding the agent's version is restored
 * to the parent's; HEAD already holding the parent's needs nothing; anything else means a later
 * commit changed it, and the whole undo is refused (`REVERT_CONFLICT`: no merge is attempted).
 * A path to restore whose index or working tree differs from HEAD is the user's uncommitted work:
 * refused (`uncommitted-changes`). Then the branch moves back over the agent commit (`reset`) only
 * when it is HEAD, has a parent, is on no remote-tracking ref and nothing at all is uncommitted;
 * otherwise a new commit takes it back (`revert`).
 */
export function decideRevert(s: RevertState): RevertDecision {
  if (s.revertedBy !== null) return { kind: 'already-reverted', by: 'revert', revertCommit: s.revertedBy };
  const submodules = s.paths.filter((p) => [p.parent, p.agent, p.head].some((e) => e.mode === GITLINK));
  if (submodules.length > 0)
    return {
      kind: 'refused',
      ...refusal(
        'submodule-changes',
        'the commit changes a submodule, which an undo does not touch',
        submodules.map((p) => p.path),
      ),
    };
  const write = s.paths.filter((p) => sameEntry(p.head, p.agent));
  const conflicts = s.paths.filter((p) => !sameEntry(p.head, p.agent) && !sameEntry(p.head, p.parent));
  if (conflicts.length > 0)
    return {
      kind: 'refused',
      ...refusal(
        'conflict',
        `changed again since the agent's commit: ${conflicts.map((p) => p.path).join(', ')}`,
        conflicts.map((p) => p.path),
      ),
    };
  const dirty = write.filter((p) => p.dirty || !sameEntry(p.worktree, p.head));
  if (dirty.length > 0)
    return {
      kind: 'refused',
      ...refusal(
        'uncommitted-changes',
        `you have uncommitted changes on ${dirty.map((p) => p.path).join(', ')}, which the undo would overwrite`,
        dirty.map((p) => p.path),
      ),
    };
  if (write.length === 0) return { kind: 'already-reverted', by: 'content', revertCommit: null };
  const entries = write.map((p) => ({ ...p.parent, path: p.path }));
  const expect = write.map((p) => ({ ...p.head, path: p.path }));
  const reset = s.head === s.agent && s.parent !== null && s.onRemote.length === 0 && s.clean;
  return { kind: reset ? 'reset' : 'revert', entries, expect };
}
