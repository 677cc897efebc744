/**
 * Every error the library throws is an {@link EntityGitError} with a literal `code`; callers and
 * tests switch on `code`, never on the message.
 */
export type ErrorCode =
  | 'INVALID_ID'
  | 'INVALID_NODE'
  | 'INVALID_SESSION'
  | 'NON_JSON_VALUE'
  | 'DAG_DUPLICATE_ID'
  | 'DAG_DUPLICATE_SEQ'
  | 'DAG_MISSING_PREDECESSOR'
  | 'DAG_CYCLE'
  | 'SESSION_NOT_FOUND'
  | 'NODE_NOT_FOUND'
  | 'PROJECT_NOT_FOUND'
  | 'INVALID_PROJECT'
  | 'DUPLICATE_PROJECT'
  | 'INVALID_WORKDIR'
  | 'INVALID_OPTION'
  | 'OBJECT_NOT_FOUND'
  | 'OBJECT_CORRUPT'
  | 'REF_CORRUPT'
  | 'REF_CONFLICT'
  | 'REF_LOCKED'
  | 'LOCK_TIMEOUT'
  | 'COMMIT_NOT_FOUND'
  | 'BRANCH_NOT_FOUND'
  | 'REPO_CORRUPT'
  /** The session's repository was written in an older format; `sync({ full: true })` rebuilds it. */
  | 'REPO_FORMAT_OLD'
  | 'STORAGE_ERROR'
  | 'QUOTA_EXCEEDED'
  | 'DB_ERROR'
  /** An existing table lacks a column the contract (or the configured names) needs, or has the wrong type. */
  | 'SCHEMA_MISMATCH'
  /** The git host refused the credentials (HTTP 401/403, or `onAuth` cancelled). */
  | 'REMOTE_AUTH'
  /** The session's repository does not exist on the git host (HTTP 404). */
  | 'REMOTE_NOT_FOUND'
  /** The git host or this library refused a ref update: the branches have diverged. */
  | 'REMOTE_REJECTED'
  /** Any other failure talking to the git host; `data.retryable` says whether another try may help. */
  | 'REMOTE_ERROR'
  | 'PROJECT_GIT_ERROR'
  | 'WORKTREE_CHANGED'
  /** A commit named for an undo is not the agent's commit of that session and turn (a user's commit, say). */
  | 'NOT_AGENT_COMMIT'
  /** The turn made no agent commit on the project's current branch (or the commit named is not on it). */
  | 'AGENT_COMMIT_NOT_FOUND'
  /** A path the agent's commit changed has changed again since: undoing it would take back someone else's edit. */
  | 'REVERT_CONFLICT'
  /** The undo cannot run safely now (`data.reason`: uncommitted changes, a merge in progress, a lock held…); nothing was touched. */
  | 'REVERT_REFUSED'
  | 'GIT_NOT_FOUND'
  | 'INVALID_ARGUMENT'
  /** A transcript file (Claude Code JSONL, an OpenAI-style message log) that cannot be read as one. */
  | 'TRANSCRIPT_INVALID'
  | 'UNKNOWN_ACTION';

export class EntityGitError<C extends ErrorCode = ErrorCode> extends Error {
  override readonly name = 'EntityGitError';
  readonly code: C;
  readonly data: Record<string, unknown>;
  constructor(code: C, message: string, data: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(`[entity-git] ${message}`, options);
    this.code = code;
    this.data = data;
  }
}

export function isEntityGitError(err: unknown, code?: ErrorCode): err is EntityGitError {
  return err instanceof EntityGitError && (code === undefined || err.code === code);
}

/** The `code` of a Node/LightningFS style fs error, if any. */
export function fsErrorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string'
    ? (err as { code: string }).code
    : undefined;
}

/**
 * Any error as a typed one: an {@link EntityGitError} passes through; anything else becomes a
 * `STORAGE_ERROR` whose message is `context` (when given) and the error's message, with `data`,
 * the original as its `cause`.
 */
export function toStorageError(err: unknown, context?: string, data: Record<string, unknown> = {}): EntityGitError {
  if (err instanceof EntityGitError) return err;
  const message = String((err as Error)?.message ?? err);
  return new EntityGitError('STORAGE_ERROR', context === undefined ? message : `${context}: ${message}`, data, {
    cause: err,
  });
}
