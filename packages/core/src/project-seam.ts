// The project auto-commit as core sees it: the types a mirror service's `projectGit` option and
// the actions' project commands are written against. The implementation (`createProjectGit`, its
// engines, the decision) is the package `@entity-git/project`, which depends on core; core never
// imports it, so a mirror without projects carries none of it. Type-only: no runtime code here.

/**
 * What a workdir was, as the project engine found it (`missing`, `not-a-directory`,
 * `not-a-repository`, `bare`, or `repository`): the `kind` of `WorkdirState` in `@entity-git/project`.
 */
export type WorkdirKind = 'missing' | 'not-a-directory' | 'not-a-repository' | 'bare' | 'repository';

/** Why `afterTurn` did not commit the turn's edits. */
export type SkipReason =
  | 'workdir-missing'
  | 'workdir-not-a-directory'
  | 'bare-repository'
  | 'unsupported-repository'
  | 'merge-in-progress'
  | 'rebase-in-progress'
  | 'am-in-progress'
  | 'cherry-pick-in-progress'
  | 'revert-in-progress'
  | 'bisect-in-progress'
  | 'detached-head'
  | 'submodule-changes'
  | 'uncommitted-changes'
  | 'no-snapshot'
  | 'repository-locked'
  | 'nothing-to-commit';

/** A commit the agent made in the project repository. */
export interface ProjectCommit {
  readonly commit: string;
  /** The full ref that advanced (`refs/heads/main`). */
  readonly branch: string;
  readonly sessionId: string;
  readonly turn: number;
  /** Repository-relative paths it recorded (changed or removed), sorted. */
  readonly paths: readonly string[];
}

/**
 * An agent commit whose process died after its branch moved and before the index held it (see
 * docs/project-git.md, "A crash in the middle of a commit"), whose index update this call finished.
 */
export interface RecoveredCommit {
  readonly commit: string;
  /** The paths whose index entry was set to the commit's: they still held the parent commit's. */
  readonly paths: readonly string[];
  /** The paths left as they are: the user has staged something of their own there since. */
  readonly userPaths: readonly string[];
  /** One sentence for the UI when `userPaths` is not empty, else null. */
  readonly warning: string | null;
}

interface ResultBase {
  /** Present (non-empty) only when this call finished an interrupted agent commit's index update first. */
  readonly recovered?: readonly RecoveredCommit[];
  /**
   * Edits of earlier turns (of this or other sessions) that had been left pending and were
   * committed by this call, each under its own turn's message, before this turn's commit.
   */
  readonly deferred: readonly ProjectCommit[];
  /** Touched paths outside the repository (or naming no file git can hold): never committed, never blocking. */
  readonly ignoredPaths: readonly string[];
}

export interface CommittedResult extends ResultBase, ProjectCommit {
  readonly status: 'committed';
}

export interface NothingToCommitResult extends ResultBase {
  readonly status: 'skipped';
  readonly reason: 'nothing-to-commit';
  readonly warning: null;
}

/** The project is in shadow mode: the turn is kept in its shadow repository, nothing in the user's (docs/design.md §7). */
export interface ShadowModeResult extends ResultBase {
  readonly status: 'skipped';
  readonly reason: 'shadow-mode';
  readonly warning: null;
  /** Always empty: nothing of the user's blocks a snapshot. */
  readonly userPaths: readonly string[];
  /** The paths the turn's tools reported, as the snapshot recorded them (workdir-relative). */
  readonly agentPaths: readonly string[];
}

export interface SkippedResult extends ResultBase {
  readonly status: 'skipped';
  readonly reason: Exclude<SkipReason, 'nothing-to-commit'>;
  /** One sentence for the UI. For `uncommitted-changes`, exactly `UNCOMMITTED_CHANGES_WARNING` (`@entity-git/project`). */
  readonly warning: string;
  /** The changes that are not the agent's and blocked the commit (repository-relative); `[]` for reasons that are not about changes. */
  readonly userPaths: readonly string[];
  /** The agent's changed paths left uncommitted. For `uncommitted-changes` they are kept pending and committed by a later turn once nothing blocks. */
  readonly agentPaths: readonly string[];
}

export type AfterTurnResult = CommittedResult | NothingToCommitResult | SkippedResult | ShadowModeResult;

/**
 * What was uncommitted in a project before a turn, from {@link ProjectGit.beforeTurn}: a plain
 * JSON value the dispatcher keeps and hands back to `afterTurn`.
 */
export interface ProjectSnapshot {
  readonly version: 1;
  /** The workdir as given (normalized). */
  readonly workdir: string;
  /** The repository root then; null when the workdir was in none (or missing). */
  readonly root: string | null;
  readonly state: WorkdirKind;
  /** HEAD's commit then (null: unborn or no repository). */
  readonly head: string | null;
  /** When it was taken, ms since the epoch. */
  readonly takenAt: number;
  /**
   * Paths that were the user's: uncommitted changes (repository-relative), or, for a directory in
   * no repository, every entry in it (relative to it). Everything at or below them stays the user's.
   */
  readonly dirty: readonly string[];
  /** Uncommitted paths that held an agent's pending edit, byte for byte: not the user's. */
  readonly agentDirty: readonly string[];
  /** Present (non-empty) only when taking the snapshot first finished an interrupted agent commit's index update. */
  readonly recovered?: readonly RecoveredCommit[];
  /** The shadow repository's snapshot commit taken before the turn, when the project has one (`@entity-git/project`, "Shadow mode"). */
  readonly shadowBefore?: string;
}

export interface AfterTurnInput {
  /** The project's workdir, absolute. */
  workdir: string;
  sessionId: string;
  /** The turn number N (≥ 1), as in the session repository. */
  turn: number;
  /** The turn's user message (its first 60 code points, whitespace folded, make the subject). */
  userMessage: string;
  /** The model that ran the turn, named in the committer. */
  model: string;
  /** The session repository's commit of this turn, when already known (a `Session-Commit` trailer). */
  sessionCommit?: string | null;
  /** Every path the turn's tools wrote, created or removed: absolute, or relative to the workdir. */
  touchedPaths: readonly string[];
  /**
   * Optional: for paths of `touchedPaths` (keyed the same way), the bytes the tool left there, as a
   * git blob id ({@link gitBlobId}), or null for a file it removed. It closes the one case no
   * snapshot can tell: someone editing, during the turn, the very file the agent wrote. A path whose
   * file no longer holds the reported bytes is then the user's and blocks (`uncommitted-changes`),
   * and the commit checks the bytes again as it reads them, so no byte the user wrote is committed.
   */
  writtenBlobs?: Readonly<Record<string, string | null>>;
  /** From `beforeTurn`; see `ProjectGitOptions.withoutSnapshot` (`@entity-git/project`) for what happens without one. */
  snapshot?: ProjectSnapshot | null;
}

export interface ProjectGit {
  /** The engine's name. */
  readonly engine: string;
  /**
   * Record what is uncommitted before a turn. Never writes in the user's workdir or repository:
   * the auto-commit writes nothing at all; the shadow mode also takes the turn's before-snapshot
   * into its private repository (`shadowBefore`).
   */
  beforeTurn(workdir: string): Promise<ProjectSnapshot>;
  /**
   * What {@link beforeTurn} would report now, recording nothing: read-only, writes nothing,
   * anywhere (no snapshot either). What a status view asks, as often as it likes.
   */
  inspect(workdir: string): Promise<ProjectSnapshot>;
  /**
   * After a turn of a session bound to a project: commit exactly the agent's edits, or skip and say
   * why. Throws only for invalid input (`INVALID_WORKDIR`, `INVALID_ID`, `INVALID_OPTION`) and when git
   * itself fails (`PROJECT_GIT_ERROR`, `LOCK_TIMEOUT`, …); a skip is a result, not an error.
   */
  afterTurn(input: AfterTurnInput): Promise<AfterTurnResult>;
  /**
   * Undo what the agent committed for a turn, when the user asks (docs/project-git.md, "Undo"):
   * only entity-git's own commit of that session and turn, found by its trailers. The branch moves
   * back over it when it is the tip, never pushed and nothing is uncommitted (`reset`); otherwise a
   * new commit takes it back (`reverted`). Done before: `already-reverted`, nothing written.
   * Refusals throw, touching nothing: `NOT_AGENT_COMMIT`, `AGENT_COMMIT_NOT_FOUND`,
   * `COMMIT_NOT_FOUND`, `REVERT_CONFLICT`, `REVERT_REFUSED` (`data.reason`: `uncommitted-changes`,
   * `merge-in-progress`…, `detached-head`, `repository-locked`, …); and `INVALID_OPTION`,
   * `INVALID_WORKDIR`, `INVALID_ID` for bad input.
   */
  revertAgentTurn(input: RevertInput): Promise<RevertResult>;
  /** The session's agent commits in the project and whether each was undone. Read-only: writes nothing, anywhere. */
  agentCommits(input: AgentCommitsInput): Promise<AgentCommitsResult>;
}

// The undo of an agent turn as callers see it: what they ask, what they get back, and what a
// project's branch says about a session's agent commits (docs/project-git.md, "Undo").

/** Which agent commit to take back: a turn's (the newest agent commit of that turn on the current branch), or one named. */
export interface RevertInput {
  /** The project's workdir, absolute. */
  workdir: string;
  sessionId: string;
  /** The turn N whose agent commit is undone. With `commit` too, the commit must be that turn's. */
  turn?: number;
  /** The agent commit itself (40 hex digits); it must be on the current branch. */
  commit?: string;
}

interface RevertBase {
  readonly sessionId: string;
  readonly turn: number;
  /** The agent commit taken back. */
  readonly commit: string;
  /** The full ref that moved, or would have (`refs/heads/main`). */
  readonly branch: string;
  /** Repository-relative paths the undo restored to the agent commit's parent's version (sorted); `[]` when it did nothing. */
  readonly paths: readonly string[];
  /** One sentence for the UI. */
  readonly message: string;
}

/** The branch moved back over the agent commit: it was the tip, never pushed, and the tree was clean. */
export interface ResetResult extends RevertBase {
  readonly kind: 'reset';
  /** HEAD now: the agent commit's parent. */
  readonly head: string;
}

/** A new commit on the branch takes the agent commit back (`[agent <session>] revert turn <N>: …`, `Reverts: <commit>`). */
export interface RevertedResult extends RevertBase {
  readonly kind: 'reverted';
  /** HEAD now: the revert commit. */
  readonly head: string;
  readonly revertCommit: string;
}

/** Nothing done: the agent commit was taken back before. */
export interface AlreadyRevertedResult extends RevertBase {
  readonly kind: 'already-reverted';
  /**
   * How: `reset` (an undo moved the branch back over it: the branch's reflog says so), `revert`
   * (a commit on the branch names it in `Reverts:`, or `git revert`'s "This reverts commit …"), or
   * `content` (every path it changed already holds its parent's version on the branch).
   */
  readonly by: 'reset' | 'revert' | 'content';
  /** The commit that reverted it, for `by: 'revert'`; else null. */
  readonly revertCommit: string | null;
}

export type RevertResult = ResetResult | RevertedResult | AlreadyRevertedResult;

export interface AgentCommitsInput {
  /** The project's workdir, absolute. */
  workdir: string;
  sessionId: string;
  /** At most this many commits are listed (newest first). Default 100. */
  limit?: number;
}

/** One agent commit of a session in the project: on the current branch, or moved back over by an undo. */
export interface AgentTurnCommit {
  readonly commit: string;
  readonly turn: number;
  /** The user message's subject, as the commit's subject carries it. */
  readonly subject: string;
  /** The session repository's commit of the turn (its `Session-Commit:` trailer); null when it has none. */
  readonly sessionCommit: string | null;
  /** Null while its edits stand; else how an undo took them back (`revertCommit` for `revert`). */
  readonly undone: null | { readonly by: 'revert'; readonly revertCommit: string } | { readonly by: 'reset' };
}

export interface AgentCommitsResult {
  /** The branch HEAD names; null when detached (then nothing is listed) or when the workdir is in no repository. */
  readonly branch: string | null;
  /** Newest first: those on the branch, then those an undo moved the branch back over (from its reflog). */
  readonly commits: readonly AgentTurnCommit[];
}
