import type { Identity } from '@entity-git/git';
import type { Logger } from '../observe/logger.js';
import type { ProjectJournal, ProjectLock } from './project-coordination.js';
import type { ProjectGitEngine, WorkdirState } from './project-git-engine.js';
import type { AgentCommitsInput, AgentCommitsResult, RevertInput, RevertResult } from './revert-types.js';

/** The warning docs/design.md gives (its 'Safety rules'), word for word. */
export const UNCOMMITTED_CHANGES_WARNING =
  "you have uncommitted changes, the agent's edits won't be auto-committed for now";

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

export interface SkippedResult extends ResultBase {
  readonly status: 'skipped';
  readonly reason: Exclude<SkipReason, 'nothing-to-commit'>;
  /** One sentence for the UI. For `uncommitted-changes`, exactly {@link UNCOMMITTED_CHANGES_WARNING}. */
  readonly warning: string;
  /** The changes that are not the agent's and blocked the commit (repository-relative); `[]` for reasons that are not about changes. */
  readonly userPaths: readonly string[];
  /** The agent's changed paths left uncommitted. For `uncommitted-changes` they are kept pending and committed by a later turn once nothing blocks. */
  readonly agentPaths: readonly string[];
}

export type AfterTurnResult = CommittedResult | NothingToCommitResult | SkippedResult;

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
  readonly state: WorkdirState['kind'];
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
  /** From `beforeTurn`; see {@link ProjectGitOptions.withoutSnapshot} for what happens without one. */
  snapshot?: ProjectSnapshot | null;
}

export interface ProjectGit {
  /** The engine's name. */
  readonly engine: string;
  /** Record what is uncommitted before a turn. Read-only: writes nothing, anywhere. */
  beforeTurn(workdir: string): Promise<ProjectSnapshot>;
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

export interface ProjectGitOptions {
  engine: ProjectGitEngine;
  /** Where each turn's outcome is reported (`project.commit`, timed). Default: none. */
  logger?: Logger;
  /** The cross-process lock per repository. Default: an in-process mutex only (one process, or tests). */
  lock?: ProjectLock;
  /** Where pending edits live between turns. Default: process memory. */
  journal?: ProjectJournal;
  /** The committer's email; its name is always `agent (<model> via <product>)`. Default `agent@openprogram.invalid`. */
  committerEmail?: string;
  /** The product named in the committer. Default `OpenProgram`. */
  product?: string;
  /** The author of agent commits. Default: the committer. */
  author?: Identity;
  /** The branch `git init` makes when the workdir is in no repository. Default: the engine's. */
  initialBranch?: string;
  /**
   * What `afterTurn` does when given no usable snapshot and every change is a path the agent
   * touched. `'skip'` (the default): skip with `no-snapshot` — the library cannot tell whether the
   * user had edited such a path before the turn, and committing it could carry the user's bytes.
   * `'trust-touched'`: assume every touched path that changed is the agent's. Either way any
   * change on a path the agent did not touch blocks, as always.
   */
  withoutSnapshot?: 'skip' | 'trust-touched';
  /** Pending edits older than this are forgotten (their files stay as they are). Default 7 days. */
  pendingTtlMs?: number;
  /** The clock, ms since the epoch. Default `Date.now`. */
  now?: () => number;
}
