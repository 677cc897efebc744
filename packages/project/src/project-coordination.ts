import type { FileState, InFlightCommit } from './project-git-engine.js';

/**
 * Run `fn` holding the lock named `key` against every other process (and tab) that commits into
 * the same project. `key` is an absolute path: the repository root, or the workdir while there
 * is no repository yet. Implementations must not create anything at or inside `key` — it is the
 * user's directory; Node's (`workdirLock` in `@entity-git/node-fs`) keeps its lock file under the
 * temp directory, named by a hash of the real path. Core adds an in-process mutex around it.
 */
export type ProjectLock = <T>(key: string, fn: () => Promise<T>) => Promise<T>;

/**
 * Agent edits that were left uncommitted because something else in the tree blocked them (the
 * user's changes, or another session's edits whose turn had not ended yet). A later turn — of any
 * session — commits them, under their own turn's message, once nothing blocks and each file still
 * holds exactly the bytes recorded here.
 */
export interface PendingEdit {
  readonly sessionId: string;
  readonly turn: number;
  /** The user message's subject text, already folded. */
  readonly subject: string;
  readonly model: string;
  readonly sessionCommit: string | null;
  /** When the turn ended, ms since the epoch (the agent commit's author time). */
  readonly at: number;
  /** The agent's paths and their content at the end of the turn (null `oid`: the agent removed it). */
  readonly files: readonly FileState[];
  /**
   * Set on a record that is not a pending edit but an agent commit in flight: written just before
   * the branch moves, removed once the index holds the commit's entries (`files` is then `[]`, so
   * a reader that knows nothing of it skips it). Found at the next auto-commit or `beforeTurn` with
   * HEAD at that commit, it means the process died in between: core finishes the index update for
   * exactly `paths` (see docs/project-git.md, "A crash in the middle of a commit").
   */
  readonly inFlight?: InFlightCommit;
}

/**
 * Where pending edits are kept between turns, shared by every process committing into a project.
 * Always called under the {@link ProjectLock} of `root`, so implementations need no locking.
 * Default: process memory (sessions of one process see each other's; a restart forgets them,
 * which only means those edits stay uncommitted). Node's `workdirJournal` keeps a JSON file
 * beside the lock file.
 */
export interface ProjectJournal {
  /** The pending edits (and in-flight commits) recorded for the repository at `root`, oldest first; `[]` when none. Every field must come back as written. */
  read(root: string): Promise<PendingEdit[]>;
  /** Replace them (`[]` clears). */
  write(root: string, edits: readonly PendingEdit[]): Promise<void>;
}
