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
