import type { DagSource } from '../dag/dag-source.js';
import type { Identity, LockOptions, Storage } from '@entity-git/git';
import type { MetadataKeys } from '../model/commit-message.js';
import type { DagNode, JsonValue } from '../model/types.js';
import type { Logger } from '../observe/logger.js';
import type { RedactionSetting } from '../redact/redaction-options.js';

/** The two layouts of `messages/` (see {@link MirrorOptions.layout}). */
export type Layout = 'flat' | 'sharded';

/** How {@link createMirror} builds a mirror. */
export interface MirrorOptions {
  /** The DAG to follow. Required. */
  dag: DagSource;
  /** The storage adapter (`nodeStorage()` from @entity-git/node-fs, the browser's, …). Required. */
  storage: Storage;
  /**
   * Absolute directory holding one repository per session (trailing slashes are dropped). Required:
   * a path not starting with `/` is refused (`INVALID_OPTION`).
   */
  root: string;
  /**
   * Author and committer of session commits; part of every commit id. Default
   * `entity-git <entity-git@localhost>` (`DEFAULT_IDENTITY`).
   */
  identity?: Identity;
  /**
   * Where commit messages look in node metadata (tool name, tokens, pending); the keys given
   * replace those of `defaultMetadataKeys`, the others are kept. Default `defaultMetadataKeys`.
   */
  metadataKeys?: Partial<MetadataKeys>;
  /**
   * What is redacted before a node's file, its commit message and the meta ref are built
   * (docs/design.md, 'Redaction'): secrets become `[REDACTED:<rule>]` and the commit message counts
   * them per rule. Part of every commit id, as the metadata keys are: every mirror of one DAG must
   * use the same setting. `false` redacts nothing. Default `{ preset: 'recommend' }` (secretlint's
   * recommended detector set, loaded on the first sync).
   */
  redaction?: RedactionSetting;
  /**
   * The ref and index locks (`<ref>.lock`, `index.lock`): how long one someone else holds is
   * waited for (`timeoutMs`), and after how long one untouched was left by a killed writer and
   * is taken over (`staleMs`). Default `LOCK_DEFAULTS.ref` (5 s, 30 s). The sync lock, held for a
   * whole sync, is the storage's (`nodeStorage({ syncLock })`, `browserStorage({ syncLock })`).
   */
  lock?: Partial<LockOptions>;
  /** Page size asked of the DagSource. Default 500. */
  batchSize?: number;
  /**
   * How new repositories lay out `messages/` (docs/design.md, 'The session repository'): `flat` (the default) puts every
   * message file in `messages/`; `sharded` puts each in `messages/<seq div 1000, 3 digits>/`, so a
   * turn rewrites one small tree instead of one that grows with the session. The layout is
   * recorded in the repository's config (`entitygit.layout`) when it is created, and a
   * repository keeps its own: this option never rewrites an existing history. Readers take
   * either layout from the trees themselves.
   */
  layout?: Layout;
  /**
   * Write a turn's objects as one small pack (`.pack` + `.idx`) instead of a loose file each: two
   * files created instead of about ten, most of a turn's cost on a disk where creating a file is
   * slow. Objects of 64 KB or more stay loose (a pack is built in memory and hashed whole). At most
   * {@link TURN_PACKS_MAX} packs: past that a turn goes loose again, so a repository without a
   * background packer never holds an unbounded number of packs (32). Default `false`;
   * `createNodeMirror` turns it on (the Node packer merges the small packs in the background).
   */
  packTurns?: boolean;
  /** Where each sync is reported (`mirror.sync`, timed; packages/core/README.md, "Observability"). Default: none (nothing logged). */
  logger?: Logger;
  /**
   * Give the event loop a macrotask turn after this many ms of work in a sync's loops, so a long
   * backfill never stalls the host (0: never; a negative number is refused). Default
   * `DEFAULT_YIELD_EVERY_MS` (1 ms).
   */
  yieldEveryMs?: number;
}

/** Options of {@link Mirror.sync}. */
export interface SyncOptions {
  /** Ignore the cache and check everything (repair). Default false. */
  full?: boolean;
  /**
   * Read the DAG's nodes again from this seq on (an integer ≥ 1), besides those after the last
   * mirrored seq and from the first pending one, and commit again every turn whose nodes changed.
   * For a source that may rewrite a node it already gave as complete — a transcript whose last
   * turn was taken as finished after a quiet time, then grew — at the cost of reading those
   * nodes only, not the repair's whole check. Default: none (nodes a commit holds are not read again).
   */
  reread?: number;
}

/** What one `sync` did. */
export interface SyncResult {
  /** The session synced. */
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
  /**
   * The branches this sync carried forward by whole turns from the tip they had (that tip is on
   * the new one's first-parent line), each with the message files its new turns added: what a
   * search index takes instead of reading the repository again (docs/design.md, 'Search').
   * Absent when no branch moved so (a branch made, or a turn committed again); a branch whose new
   * messages pass 1 MiB carries none (a large tool output is not parsed twice or held here).
   */
  extendedBranches?: ExtendedBranch[];
}

/** A branch a sync carried forward from the tip it had, and the messages its new turns added. */
export interface ExtendedBranch {
  name: string;
  /** The tip before the sync. */
  from: string;
  /** The tip after it. */
  tip: string;
  /** Each new message file: its blob id, its node, and the turn (number and commit) that brought it. */
  messages: { blob: string; node: DagNode; turn: number; commit: string }[];
}

/** One commit of a session branch, as `log` returns it (newest first). */
export interface CommitInfo {
  /** The commit id (40 hex digits). */
  sha: string;
  /** Its parents' ids, first parent first (none for turn 1). */
  parents: string[];
  /** Committer time, seconds since the epoch (the turn's latest created_at). */
  time: number;
  /** The message's first line. */
  subject: string;
  /** The whole commit message, trailers included. */
  message: string;
  /** The turn number, from the trailers; null for a commit the mirror did not write. */
  turn: number | null;
  /** The id of the turn's last node, from the trailers; null for a commit the mirror did not write. */
  node: string | null;
  /** The seq of the turn's last node, from the trailers; null for a commit the mirror did not write. */
  seq: number | null;
}

/**
 * Which page of a branch's log `log` returns (newest first): `limit` commits from the
 * `offset`-th newest (0: the tip). `offset` is an integer from 0 to the turn count less one (0 on
 * an empty branch), `limit` an integer from 1 to 10,000; anything else is refused
 * with `INVALID_ARGUMENT`.
 */
export interface LogPageRequest {
  offset: number;
  limit: number;
}

/** One page of a branch's log, as `log` returns it when asked for a page. */
export interface LogPage {
  /** The branch's turn count: commits on its first-parent chain (M of "Turn N / M"). */
  total: number;
  /** The page's first commit, counted from the tip (0). */
  offset: number;
  /** At most `limit` commits from `offset` down, newest first: the slice of the whole log. */
  commits: CommitInfo[];
}

/** One branch of a session's repository, as `branches` returns it. */
export interface BranchInfo {
  /** The branch name (`main`, or the fork's name), without `refs/heads/`. */
  name: string;
  /** The commit id at its tip. */
  commit: string;
  /** The tip's turn number (from its trailers; 0 for a tip the mirror did not write). */
  turns: number;
  /** True for the branch HEAD names. */
  head: boolean;
}

/** A read-only view of a session at one commit (replay): nothing in the working tree changes. */
export interface TurnView {
  /** The session read. */
  sessionId: string;
  /** The commit read (as asked). */
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

/** What a {@link Difference} found. */
export type DifferenceKind =
  /** The session has no repository. */
  | 'missing-repo'
  /** The DAG itself is invalid (a node, a duplicate id, a cycle): nothing else is compared. */
  | 'dag-error'
  /** A branch the DAG derives has no ref. */
  | 'missing-branch'
  /** A branch's commits (trailers) or the messages at its tip are not the DAG's. */
  | 'branch-differs'
  /** A branch the DAG does not derive (kept: refs are never deleted; `ok` stays true). */
  | 'extra-branch'
  /** HEAD names another branch than the one holding the DAG head. */
  | 'head-differs'
  /** An object a branch needs is missing. */
  | 'missing-object'
  /** Something is damaged: a ref, HEAD, the config, an object, a pack, a lock left behind. */
  | 'corrupt'
  /** The index or the working-tree files are not those of HEAD's tip. */
  | 'worktree-differs'
  /** The meta ref (`refs/entity-git/meta`) does not show the session row as it is now. */
  | 'meta-differs'
  /** The config records a format older than today's (`REPO_FORMAT`), which sync refuses. */
  | 'format-old'
  /** A branch's commit ids differ from those a fresh backfill of the same DAG writes. */
  | 'ids-differ';

/** One way a repository differs from its DAG. */
export interface Difference {
  /** What differs. */
  kind: DifferenceKind;
  /** The branch it concerns, when it concerns one. */
  branch?: string;
  /** What the DAG expects there (a branch, a commit id, a turn), when the kind has one. */
  expected?: string | null;
  /** What the repository holds there (null: nothing), when the kind has one. */
  actual?: string | null;
  /** A sentence for people. */
  detail: string;
}

/** Options of {@link Mirror.verify}. */
export interface VerifyOptions {
  /**
   * Skip a session the DAG's change marker proves unchanged since the last sync and whose refs
   * are where that sync left them (`DagSource.changeMarker`): refs and a few small files are
   * read, not the DAG nor the objects. A source without markers, or a session without one
   * recorded, gets the full check. Default false: the full check.
   */
  quick?: boolean;
  /**
   * With `quick`: the session's change marker as the caller read it before this call, from this
   * mirror's DAG source (`DagSource.changeMarkers`, one read for many sessions), used instead of
   * asking `changeMarker` again; `null`: none, the full check. Default: asked here.
   */
  marker?: string | null;
  /**
   * The result of a sync of this session by this mirror, just made: the check after it
   * (docs/design.md, 'Verify after a sync'). The repository is compared with the DAG as that sync
   * read it and with the commits it built — refs, HEAD, objects, the working tree, the meta ref,
   * damage — without reading the DAG or building a commit again. Anything that is not as the sync
   * left it sends the check to the full comparison, which reads the DAG. A result of another
   * mirror, or of a sync of another session, is ignored (the full check). Default: none.
   */
  synced?: SyncResult;
}

/** What one `verify` found. */
export interface VerifyReport {
  /** The session verified. */
  sessionId: string;
  /** Set when `quick` skipped the comparison: the marker and the refs equal what the last sync recorded. */
  unchanged?: true;
  /** True when the repository equals the DAG (`extra-branch` alone keeps it true). */
  ok: boolean;
  /** Every difference found, in the order checked (empty when `unchanged`). */
  differences: Difference[];
  /**
   * With `synced`, when the check found differences: the DAG is no longer what that sync read (it
   * was written to since), so the differences may be rows the sync never saw.
   */
  dagChanged?: true;
}

/**
 * The git side of a session (docs/design.md, 'What it is'). One implementation, in core, over any storage
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
   *
   * Fails with, among others, `SESSION_NOT_FOUND` when the DAG has no such session, `INVALID_NODE` or
   * `DAG_DUPLICATE_ID` for a node the DAG should not hold, `REPO_FORMAT_OLD` for a repository
   * whose config records an older format (`data.format`).
   */
  sync(sessionId: string, options?: SyncOptions): Promise<SyncResult>;
  /**
   * The commits of a branch (default: HEAD's), newest first, following first parents; empty
   * before the first turn. `SESSION_NOT_FOUND` without a repository, `BRANCH_NOT_FOUND` for a
   * named branch it lacks.
   *
   * With `page`, only that page (see {@link LogPageRequest}) and the branch's turn count: the
   * count is read from the commit-graph's first-parent chain (commits since the last pack one by
   * one), and only the page's commit objects are read. `commits` equals the slice
   * `log(sessionId, { branch }).slice(offset, offset + limit)`.
   */
  log(sessionId: string, options: { branch?: string; page: LogPageRequest }): Promise<LogPage>;
  log(sessionId: string, options?: { branch?: string }): Promise<CommitInfo[]>;
  /** Every branch with its tip, `main` first, the others by name. `SESSION_NOT_FOUND` without a repository. */
  branches(sessionId: string): Promise<BranchInfo[]>;
  /**
   * The session as it stood at `commit` — from objects alone, the working tree is not touched.
   * `branch` picks the branch for turn numbers and prev/next (default: HEAD's if it contains the
   * commit, else the first branch that does). `COMMIT_NOT_FOUND` for an id on no branch (or not
   * an id), `BRANCH_NOT_FOUND` for a named branch the repository lacks.
   */
  read(sessionId: string, commit: string, options?: { branch?: string }): Promise<TurnView>;
  /** Whether the repository equals the DAG, and where it differs. Writes nothing. */
  verify(sessionId: string, options?: VerifyOptions): Promise<VerifyReport>;
  /** The directory of a session's repository (the working tree on Node); the id is checked, nothing is read. */
  repoPath(sessionId: string): string;
}
