import type { Identity, ParsedCommit, ReflogEntry } from '@entity-git/git';

/**
 * A multi-step git operation that stopped half-way and waits for the user (`git status` tells them
 * "You are in the middle of …"). The agent never commits through one.
 */
export type RepoOperation = 'merge' | 'rebase' | 'am' | 'cherry-pick' | 'revert' | 'bisect';

/** A repository with a working tree that contains the workdir, as its engine found it. */
export interface RepoState {
  /** The top level of the working tree, absolute and `/`-separated (git's spelling: symlinks resolved). */
  readonly root: string;
  /** Where the workdir sits below `root`: `''` when it is the top level, else `a/b` (no slashes at the ends). */
  readonly prefix: string;
  /** This working tree's git directory: `.git`, or `.git/worktrees/<name>` for a linked worktree, or `.git/modules/<name>` for a submodule. Holds HEAD, the index and the in-progress markers. */
  readonly gitdir: string;
  /** The git directory shared by every worktree: objects, branches, config. Equal to `gitdir` unless linked. */
  readonly commonDir: string;
  /** True for a worktree made by `git worktree add` (its HEAD and index are its own, its branches shared). */
  readonly linkedWorktree: boolean;
  /** The full ref HEAD names (`refs/heads/main`); null when HEAD is detached (holds a commit id itself, or names a ref outside `refs/heads/`). */
  readonly branch: string | null;
  /** The commit HEAD resolves to; null when the branch is unborn (no commit yet). */
  readonly head: string | null;
  /** Operations in progress, in no particular order; empty when none. */
  readonly operations: readonly RepoOperation[];
  /**
   * Why this engine cannot work safely on this repository (e.g. a split or sparse index, a reftable
   * or SHA-256 repository for the object engine), or null (the usual case). The decision logic
   * skips then (`unsupported-repository`).
   */
  readonly unsupported: string | null;
}

/** What a workdir is, as far as committing into it goes. */
export type WorkdirState =
  /** Nothing exists at the workdir (or a parent of it is a file). */
  | { readonly kind: 'missing' }
  /** The workdir is a file, not a directory. */
  | { readonly kind: 'not-a-directory' }
  /** A directory in no repository. `entries`: the names directly in it (what the user had there before any init). */
  | { readonly kind: 'not-a-repository'; readonly entries: readonly string[] }
  /** A repository without a working tree here: a bare repository, or the workdir is inside a git directory. */
  | { readonly kind: 'bare'; readonly gitdir: string }
  | { readonly kind: 'repository'; readonly repo: RepoState };

/**
 * One path with uncommitted changes. Ignored files (`.gitignore`, `.git/info/exclude`) never
 * appear; untracked files are listed one by one, never as their directory, except an untracked
 * nested repository, listed as its directory.
 */
export interface ChangedPath {
  /** Relative to the repository root, `/`-separated, no trailing slash. */
  readonly path: string;
  /** The index differs from HEAD here (added, modified, deleted, type or mode changed). */
  readonly staged: boolean;
  /** The working tree differs from the index here. */
  readonly unstaged: boolean;
  /** Not in the index at all. */
  readonly untracked: boolean;
  /** The index holds conflict stages for this path. */
  readonly conflicted: boolean;
  /** The path is a submodule (a gitlink) whose commit or content changed, or an untracked nested repository: never committed by the agent. */
  readonly submodule: boolean;
}

/** What git would record for a path from the working tree right now. */
export interface FileState {
  /** Relative to the repository root. */
  readonly path: string;
  /**
   * The blob id `git add` would store (after the repository's clean filters, for engines that run
   * them); null when there is no file git would record there (absent, a directory, unreadable).
   */
  readonly oid: string | null;
  /** `100644`, `100755` or `120000`; null with a null `oid`. */
  readonly mode: string | null;
}

/** An identity with a time: who, and when (seconds since the epoch; the offset is always +0000). */
export interface Signature extends Identity {
  /** Seconds since the epoch, UTC. */
  readonly time: number;
}

/** One agent commit: exactly `paths`, taken from the working tree, on the current branch. */
export interface CommitRequest {
  /** Repository-relative paths; each is recorded as it is in the working tree now, or removed when absent there. */
  readonly paths: readonly string[];
  /**
   * When given, the content each path must still have (from an earlier {@link ProjectGitEngine.hashPaths});
   * any difference aborts with `WORKTREE_CHANGED` before anything is written to a ref or the index.
   * Paths not named here are not checked. Default: none (nothing is checked).
   */
  readonly expect?: readonly FileState[];
  /** The full commit message, trailers included, ending in a newline. */
  readonly message: string;
  /** Who wrote the change, and when (core: the committer unless `ProjectGitOptions.author`, at the turn's time). */
  readonly author: Signature;
  /** Who made the commit, and when (core: `agent (<model> via <product>)`, now). */
  readonly committer: Signature;
  /** The reflog line for the branch and HEAD (`commit: <subject>`). */
  readonly reflogMessage: string;
  /**
   * Called with the new commit's id once the commit object exists and before the branch moves
   * (core records the commit in its journal here, to finish the index update after a crash). If
   * it throws, nothing moves. Default: none.
   */
  readonly beforeBranchMoves?: (commit: string) => Promise<void>;
}

/** A commit about to land, as core's journal records it: what it needs to finish the index update if the process dies after the branch moved. */
export interface InFlightCommit {
  /** The new commit's id. */
  readonly commit: string;
  /** The commit it is made on (HEAD before it); null for the first commit of an unborn branch. */
  readonly parent: string | null;
  /** The full ref that is about to move. */
  readonly branch: string;
  /** Exactly the paths the commit records (changed or removed), sorted. */
  readonly paths: readonly string[];
}

/** One index entry to set only if the index still holds what is expected there (a compare-and-set). */
export interface IndexUpdate {
  /** Relative to the repository root. */
  readonly path: string;
  /** What the index must hold at `path` (a stage-0 entry, no conflict stages) for the update to apply; null `oid`: no entry. */
  readonly expect: FileState;
  /** What to set there; null `oid`: remove the entry. */
  readonly entry: FileState;
}

/** Two index or tree entries alike: the same blob and mode, or both absent. */
export const sameEntry = (a: FileState, b: FileState): boolean =>
  a.oid === b.oid && (a.oid === null || a.mode === b.mode);

/**
 * The updates an engine's `updateIndex` applies, given what the index holds at each path
 * (`found`, null for a conflicted path): those whose expected entry is still there.
 */
export function applicableUpdates(
  updates: readonly IndexUpdate[],
  found: readonly (FileState | null)[],
): IndexUpdate[] {
  return updates.filter((u, i) => found[i] !== null && found[i] !== undefined && sameEntry(found[i]!, u.expect));
}

/** A commit that landed. */
export interface CommitDone {
  /** The new commit's id. */
  readonly commit: string;
  /** Its tree's id. */
  readonly tree: string;
  /** The commit it was made on; null for the first commit of an unborn branch. */
  readonly parent: string | null;
  /** The full ref that moved, `refs/heads/…`. */
  readonly branch: string;
  /** What each requested path was recorded as (null `oid`: removed), in the order of `CommitRequest.paths`. */
  readonly entries: readonly FileState[];
}

/** A commit as the repository holds it: its id, and its object parsed (`committer` is the raw `name <email> time zone` line). */
export interface CommitRecord extends ParsedCommit {
  readonly id: string;
}

/**
 * The undo of an agent commit the user asked for (see docs/project-git.md, "Undo"): exactly the
 * paths of `entries` set, in the working tree and in the index, to the agent commit's parent's
 * version, and the branch moved — back over the agent commit (`reset`) or on to a new commit that
 * takes it back (`commit`).
 */
export interface UndoRequest {
  /** What each path becomes: a blob and its mode, or a null `oid` to remove it. Sorted by path, each path once. */
  readonly entries: readonly FileState[];
  /**
   * What the index (one stage-0 entry, or none) and the working tree must hold at each path of
   * `entries` now — HEAD's version; any difference aborts with `WORKTREE_CHANGED` before a ref,
   * the index or a file is written.
   */
  readonly expect: readonly FileState[];
  /**
   * `reset`: the branch moves to `commit` (HEAD's parent; its tree is HEAD's with `entries` set).
   * `commit`: a new commit on HEAD whose tree is HEAD's with `entries` set, and nothing else.
   */
  readonly to:
    | { readonly kind: 'reset'; readonly commit: string }
    | { readonly kind: 'commit'; readonly message: string; readonly author: Signature; readonly committer: Signature };
  /** Who the branch's and HEAD's reflog entries name. */
  readonly who: Identity;
  /** The reflog line for the branch and HEAD. */
  readonly reflogMessage: string;
  /** As {@link CommitRequest.beforeBranchMoves}: called with the commit the branch is about to point at. */
  readonly beforeBranchMoves?: (commit: string) => Promise<void>;
}

/** An undo that landed. */
export interface UndoDone {
  /** What the branch points at now: HEAD's parent (a reset) or the new commit. */
  readonly commit: string;
  /** What it pointed at before (the HEAD the request was made on). */
  readonly parent: string;
  /** The full ref that moved. */
  readonly branch: string;
}

/**
 * What the project auto-commit logic needs of a git implementation (see docs/design.md, 'Safety
 * rules'). The decision — whether to commit, what — is core's, made once; an engine only observes
 * and performs.
 *
 * Engines: `nativeGitEngine` in `@entity-git/node-fs` (spawns `git`; the default on Node) and
 * {@link createObjectEngine} in core (over a `StorageFs`: the browser's, and Node's fallback).
 *
 * Contract for every member:
 * - Read-only members write nothing anywhere: not the index (no stat refresh), not an object, not a
 *   lock file. The only writers are `init`, `commit`, `updateIndex` and `undo`.
 * - Nothing ever resets, cleans, stashes, checks out, or moves a ref other than the current branch
 *   advancing by the commit `commit` makes — and `undo`, which the user asks for, moving it over
 *   exactly the agent commit core names.
 * - Failures are `EntityGitError`s: `PROJECT_GIT_ERROR` (git itself failed), `REF_CONFLICT` (the branch
 *   or HEAD moved meanwhile), `WORKTREE_CHANGED` (an `expect` did not hold), `REF_LOCKED` (a lock
 *   file someone else holds; nothing was written).
 * The caller holds a cross-process lock on the repository around every call.
 */
export interface ProjectGitEngine {
  /** A constant naming the engine, for messages and results (`native-git`; `isomorphic-git` for the object engine). */
  readonly name: string;

  /**
   * What `workdir` (absolute) is: missing, a file, a directory in no repository, a bare repository
   * (or inside a git directory), or part of a repository with a working tree — found the way git
   * finds one, walking up from the workdir — with its HEAD and operations in progress.
   */
  inspect(workdir: string): Promise<WorkdirState>;

  /**
   * Every uncommitted change in the whole repository (not only under the workdir): staged, unstaged,
   * untracked-not-ignored, conflicted, changed submodules. Sorted by path.
   */
  status(repo: RepoState): Promise<ChangedPath[]>;

  /** What git would record for each of `paths` from the working tree now, in the order given. Writes no object. */
  hashPaths(repo: RepoState, paths: readonly string[]): Promise<FileState[]>;

  /**
   * Make `workdir` (an existing directory in no repository) a repository with an unborn branch:
   * `initialBranch`, else the engine's default (native: git's own, `init.defaultBranch`; the object engine: `main`).
   */
  init(workdir: string, options: { readonly initialBranch?: string }): Promise<void>;

  /**
   * Commit exactly `request.paths` on `repo.branch`, whose parent is `repo.head`: a tree that is
   * HEAD's with those paths replaced by their working-tree content (or removed), nothing else —
   * whatever else the index or the working tree holds stays out. The branch moves only if it still
   * points at `repo.head` (else `REF_CONFLICT`), with a reflog entry; then the index entries of those
   * paths, and only those, are set to what was committed, so `git status` shows them clean. No hook
   * runs and nothing is signed. Resolves null, writing nothing to a ref or the index, when the tree
   * equals HEAD's.
   */
  commit(repo: RepoState, request: CommitRequest): Promise<CommitDone | null>;

  /**
   * The entries of `commit`'s tree at `paths` (null `commit`: the empty tree), in the order given:
   * mode and blob, or a null `oid` where the tree has no file there (absent, or a directory). Read-only.
   */
  treeEntries(repo: RepoState, commit: string | null, paths: readonly string[]): Promise<FileState[]>;

  /**
   * Under git's `index.lock` (waited for, never taken over: `REF_LOCKED` when it stays held), set
   * each update's path to its `entry` if, and only if, the index still holds its `expect` there;
   * leave every other entry, and every update whose `expect` does not hold, as it is. Resolves, in
   * the order given, what the index held at each path before (null: conflict stages). Writes
   * nothing when no update applies. The only index write besides `commit`'s; used to finish the
   * index update of a commit whose process died after its branch moved.
   */
  updateIndex(repo: RepoState, updates: readonly IndexUpdate[]): Promise<Array<FileState | null>>;

  /**
   * HEAD's line of history as `git log --first-parent` walks it: `from` and its first parents,
   * newest first, at most `max` commits. `[]` when `from` names no commit; the walk ends early at a
   * commit whose object is missing (a shallow clone's boundary). Read-only.
   */
  history(repo: RepoState, from: string, max: number): Promise<CommitRecord[]>;

  /**
   * The paths whose file differs between the trees of `from` (null: the empty tree) and `to` —
   * blobs, links and submodules, at any depth, each a repository-relative path; sorted. Read-only.
   */
  changedPaths(repo: RepoState, from: string | null, to: string): Promise<string[]>;

  /** The remote-tracking refs (`refs/remotes/…`) from which `commit` is reachable: empty when it was never pushed or fetched. Read-only. */
  remoteRefsContaining(repo: RepoState, commit: string): Promise<string[]>;

  /** The reflog of `ref` (a full ref name), newest first; `[]` when it has none. Read-only. */
  reflog(repo: RepoState, ref: string): Promise<ReflogEntry[]>;

  /**
   * The undo of an agent commit, under git's `index.lock` (waited for, never taken over:
   * `REF_LOCKED` when it stays held, nothing written). HEAD must still name `repo.branch` at
   * `repo.head` (else `REF_CONFLICT`) and every path hold `request.expect` in the index and the
   * working tree (else `WORKTREE_CHANGED`). Then, in this order: the new commit's objects (for
   * `commit`); `beforeBranchMoves`; the branch moved from `repo.head` under its lock with the old
   * value checked (`REF_CONFLICT` when it moved; nothing else written) and a reflog entry for it
   * and HEAD; the working-tree files of exactly those paths written (removed for a null `oid`,
   * with the directories that empties); their index entries set, stat data included, so
   * `git status` shows them clean. No other path, entry or ref is touched; no hook runs.
   */
  undo(repo: RepoState, request: UndoRequest): Promise<UndoDone>;
}
