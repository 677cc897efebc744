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
  /** A directory asked to be pruned is not a session repository entity-git wrote (nothing was touched). */
  | 'NOT_SESSION_REPOSITORY'
  /** A repository asked to be pruned belongs to a session the DAG still holds (nothing was touched). */
  | 'SESSION_IN_DAG'
  /** A prune that would remove every repository under the root, refused unless asked for (a wrong database looks so). */
  | 'PRUNE_REFUSED'
  /** A session repository could not be archived as a bundle; it was not removed. */
  | 'ARCHIVE_FAILED'
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
  /** An undo or a list of agent commits named a project the session is not bound to. */
  | 'SESSION_NOT_IN_PROJECT'
  /** A project's workdir is not in a git repository and creating one (`git init`) was not asked for. */
  | 'NOT_A_REPOSITORY'
  /** A directory entity-git keeps private files in is another user's, or others may write in it. */
  | 'UNSAFE_DIRECTORY'
  /** A turn has no snapshots in the project's shadow repository (taken before shadow snapshots, pruned, or never run). */
  | 'SNAPSHOT_NOT_FOUND'
  | 'INVALID_ARGUMENT'
  /** A transcript file (Claude Code JSONL, an OpenAI-style message log) that cannot be read as one. */
  | 'TRANSCRIPT_INVALID'
  | 'UNKNOWN_ACTION'
  /** The search index could not be opened, read or written (the repositories are untouched; `--reindex` rebuilds it). */
  | 'SEARCH_INDEX_ERROR'
  /** The configured redaction cannot run here (its detector set failed to load): nothing was written. */
  | 'REDACTION_UNAVAILABLE'
  /** A push would send secrets (`data.findings`); nothing was sent. */
  | 'SECRETS_FOUND';

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
 * Whether `err` says the storage is full: a system `ENOSPC` or `EDQUOT`, or a browser's
 * `QuotaExceededError` (a DOMException, legacy code 22), on the error or on what it wraps
 * (`cause`, or `inner` and `error` as IndexedDB wrappers keep it).
 */
export function isQuotaError(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 4) return false;
  const e = err as { name?: unknown; code?: unknown; cause?: unknown; inner?: unknown; error?: unknown };
  if (e.code === 'ENOSPC' || e.code === 'EDQUOT') return true;
  if (e.name === 'QuotaExceededError' || (e.name !== undefined && e.code === 22)) return true;
  return isQuotaError(e.cause, depth + 1) || isQuotaError(e.inner, depth + 1) || isQuotaError(e.error, depth + 1);
}

/** How {@link normaliseError} names what it wraps. */
export interface ErrorContext {
  /** The code of an error no rule recognises: the caller's own (`STORAGE_ERROR`, `DB_ERROR`, `REMOTE_ERROR`…). */
  code: ErrorCode;
  /** Who speaks, first in the message: `[node-fs]`, `[sqlite]`. Default none. */
  prefix?: string;
  /** What failed, before the error's own message: `read /repo/.git/HEAD`. Default none. */
  what?: string;
  /** The typed error's data; a rule's own fields (`statusCode`, `retryable`…) are added to it. */
  data?: Record<string, unknown>;
  /** The data field the error's own string `code` (a system or driver code) is kept in. Default: not kept. */
  codeKey?: string;
  /** Applied to the error's own message: a URL's credentials taken out, say. Default: none. */
  redact?: (text: string) => string;
  /** What a full storage means to the user, in place of "the storage is full". */
  quotaHint?: string;
  /**
   * Recognises the errors of one domain (@entity-git/remote's `transportVerdict`: a git host's answers and a host out
   * of reach), given the error and its message (redacted); null: not one of them. Default: none.
   */
  classify?: (err: unknown, message: string) => ErrorVerdict | null;
}

/**
 * What a classifier ({@link ErrorContext.classify}) makes of an error it recognises: a code
 * (default the caller's), the message to show, data fields.
 */
export interface ErrorVerdict {
  code?: ErrorCode;
  message: string;
  data?: Record<string, unknown>;
}

/** What {@link ownMessage} reads of an error. */
interface ErrorShape {
  name?: unknown;
  message?: unknown;
}

/** The error's own message: its `message` when it has one, else its `name`, else the value as text. */
function ownMessage(err: unknown): string {
  const e = err as ErrorShape | null;
  if (typeof e?.message === 'string' && e.message !== '') return e.message;
  if (typeof e?.name === 'string' && e.name !== '') return e.name;
  return String(err);
}

/** The verdict on `err`: the caller's classifier's, else a full storage's; null: the caller's code and the error's own message. */
function verdictOf(err: unknown, message: string, ctx: ErrorContext): ErrorVerdict | null {
  const verdict = ctx.classify?.(err, message) ?? null;
  if (verdict !== null) return verdict;
  if (isQuotaError(err))
    return { code: 'QUOTA_EXCEEDED', message: `${ctx.quotaHint ?? 'the storage is full'} (${message})` };
  return null;
}

/**
 * Any error as a typed one, the one place where errors of the platform become entity-git's: an
 * {@link EntityGitError} passes through unchanged; what the caller's `classify` recognises gets
 * its verdict (a git host's answers: @entity-git/remote's `transportVerdict`); a full storage is `QUOTA_EXCEEDED`;
 * anything else gets the caller's `code`, its own code kept in `data[codeKey]`. Every package
 * calls it with its code and prefix. The message is `<prefix> <what>: <the error's message>`,
 * the original is the `cause`.
 */
export function normaliseError(err: unknown, ctx: ErrorContext): EntityGitError {
  if (err instanceof EntityGitError) return err;
  const message = (ctx.redact ?? String)(ownMessage(err));
  const verdict = verdictOf(err, message, ctx);
  const head = [ctx.prefix, ctx.what].filter((s) => s !== undefined && s !== '').join(' ');
  const text = verdict?.message ?? message;
  const own = fsErrorCode(err);
  const data = {
    ...ctx.data,
    ...(ctx.codeKey !== undefined && own !== undefined ? { [ctx.codeKey]: own } : {}),
    ...verdict?.data,
  };
  return new EntityGitError(verdict?.code ?? ctx.code, head === '' ? text : `${head}: ${text}`, data, {
    cause: err,
  });
}
