import type { Identity, Logger } from '@entity-git/core';
import type { ProjectJournal, ProjectLock } from './project-coordination.js';
import type { AgentCommitLedger } from './agent-ledger.js';
import type { ProjectGitEngine } from './project-git-engine.js';

/** The warning docs/design.md gives (its 'Safety rules'), word for word. */
export const UNCOMMITTED_CHANGES_WARNING =
  "you have uncommitted changes, the agent's edits won't be auto-committed for now";

export interface ProjectGitOptions {
  engine: ProjectGitEngine;
  /** Where each turn's outcome is reported (`project.commit`, timed). Default: none. */
  logger?: Logger;
  /** The cross-process lock per repository. Default: an in-process mutex only (one process, or tests). */
  lock?: ProjectLock;
  /** Where pending edits live between turns. Default: process memory. */
  journal?: ProjectJournal;
  /** entity-git's record of the agent commits it made, which an undo needs as proof. Default: process memory. */
  ledger?: AgentCommitLedger;
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
