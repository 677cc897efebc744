import type { DagNode, JsonValue } from '../model/types.js';

export interface SyncOptions {
  /** Ignore the cache and check everything (repair). Default false. */
  full?: boolean;
}

/** What one `sync` did. */
export interface SyncResult {
  sessionId: string;
  /** Commit objects written by this sync (0 when the repository already equalled the DAG). */
  commitsWritten: number;
  /** Branches whose ref moved or was created. */
  branchesMoved: string[];
  /** The branch HEAD names after the sync; null for a session with no node yet. */
  head: string | null;
  /** Nodes read from the DAG by this sync. */
  nodesRead: number;
  /**
   * Objects this sync wrote, loose or into its packs (blobs, trees, commits; the meta ref's
   * commit too). 0 when every object it needed was already there.
   */
  objectsWritten: number;
  /** Bytes those objects took on the storage: loose object files as stored, plus each pack file whole. */
  bytesWritten: number;
  /** True when the repository did not change: no object, ref, HEAD or working-tree file written. */
  noop: boolean;
  /**
   * How the turns were found: `extended` when the new nodes only continued one branch and the
   * previous sync's plan (kept in memory) was carried on, in time independent of the session's
   * length; `full` when the whole DAG was derived (first sync, forks, edits, another writer).
   * The commits are the same either way.
   */
  derivation: 'extended' | 'full';
  /** Present when the session's head names no node of the DAG (HEAD then follows the newest leaf). */
  unknownHead?: string;
}

/** One commit of a session branch, as `log` returns it (newest first). */
export interface CommitInfo {
  sha: string;
  parents: string[];
  /** Committer time, seconds since the epoch (the turn's latest created_at). */
  time: number;
  subject: string;
  message: string;
  /** From the trailers; null for a commit the mirror did not write. */
  turn: number | null;
  node: string | null;
  seq: number | null;
}

export interface BranchInfo {
  name: string;
  commit: string;
  /** The tip's turn number. */
  turns: number;
  /** True for the branch HEAD names. */
  head: boolean;
}

/** A read-only view of a session at one commit (replay): nothing in the working tree changes. */
export interface TurnView {
  sessionId: string;
  commit: string;
  /** The branch the view walks for turn numbers and prev/next. */
  branch: string;
  /** N of "turn N / M". */
  turn: number;
  /** M: the number of turns on the branch. */
  turns: number;
  /** The previous turn's commit on the branch, or null at turn 1. */
  prev: string | null;
  /** The next turn's commit on the branch, or null at its tip. */
  next: string | null;
  /** The messages as they stood at that commit, in seq order. */
  messages: DagNode[];
  /** meta.json at that commit. */
  meta: JsonValue;
}

export type DifferenceKind =
  | 'missing-repo'
  | 'dag-error'
  | 'missing-branch'
  | 'branch-differs'
  | 'extra-branch'
  | 'head-differs'
  | 'missing-object'
  | 'corrupt'
  | 'worktree-differs'
  /** The meta ref (`refs/entity-git/meta`) does not show the session row as it is now. */
  | 'meta-differs'
  /** The repository is in format 1 (meta.json held the mutable row): a full sync rebuilds it. */
  | 'format-old'
  /** A branch's commit ids differ from those a fresh backfill of the same DAG writes. */
  | 'ids-differ';

export interface Difference {
  kind: DifferenceKind;
  branch?: string;
  expected?: string | null;
  actual?: string | null;
  detail: string;
}

export interface VerifyOptions {
  /**
   * Skip a session the DAG's change marker proves unchanged since the last sync and whose refs
   * are where that sync left them (`DagSource.changeMarker`; issue 22): refs and a few small
   * files are read, not the DAG nor the objects. A source without markers, or a session without
   * one recorded, gets the full check. Default false: the full check.
   */
  quick?: boolean;
}

export interface VerifyReport {
  sessionId: string;
  /** Set when `quick` skipped the comparison: the marker and the refs equal what the last sync recorded. */
  unchanged?: true;
  /** True when the repository equals the DAG (`extra-branch` alone keeps it true). */
  ok: boolean;
  differences: Difference[];
}

/**
 * The git side of a session (DESIGN.md §1). One implementation, in core, over any storage
 * adapter: Node and the browser run the same code and produce the same commit ids.
 */
export interface Mirror {
  /**
   * Make the session's repository equal to the DAG: commit every complete turn not yet mirrored,
   * one commit per turn; create and move branches (forks become branches); point HEAD at the
   * branch of the DAG head; point the meta ref (`refs/entity-git/meta`) at the session row; on storages with a working tree, check the
   * HEAD branch out so `git status` is clean. Incremental (reads only nodes after the last
   * mirrored seq, and from the first still-pending node) and idempotent (a second sync writes
   * nothing). Serialized per session across callers, processes and tabs.
   *
   * `full: true` is the repair mode reconcile uses: the mirror's cache is ignored, the whole DAG
   * is read, every object is checked (missing or damaged ones are written again), damaged refs
   * and HEAD are rewritten — and commits already in the repository that still match the DAG
   * (by trailers, parents and the messages at their tip) are kept, not recomputed.
   */
  sync(sessionId: string, options?: SyncOptions): Promise<SyncResult>;
  /** The commits of a branch (default: HEAD's), newest first, following first parents. */
  log(sessionId: string, options?: { branch?: string }): Promise<CommitInfo[]>;
  /** Every branch with its tip, `main` first. */
  branches(sessionId: string): Promise<BranchInfo[]>;
  /**
   * The session as it stood at `commit` — from objects alone, the working tree is not touched.
   * `branch` picks the branch for turn numbers and prev/next (default: HEAD's if it contains the
   * commit, else the first branch that does).
   */
  read(sessionId: string, commit: string, options?: { branch?: string }): Promise<TurnView>;
  /** Whether the repository equals the DAG, and where it differs. Writes nothing. */
  verify(sessionId: string, options?: VerifyOptions): Promise<VerifyReport>;
  /** The directory of a session's repository (the working tree on Node). */
  repoPath(sessionId: string): string;
}
