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
  /** Who speaks, first in the message: `[node-fs]`, `[sql]`. Default none. */
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
}

/** What a rule makes of an error: a code (default the caller's), a message, data fields. */
interface Verdict {
  code?: ErrorCode;
  message: string;
  data?: Record<string, unknown>;
}

interface ErrorShape {
  code?: unknown;
  name?: unknown;
  message?: unknown;
  data?: { statusCode?: unknown; statusMessage?: unknown; reason?: unknown; result?: unknown };
  cause?: unknown;
}

/** System codes of a host that could not be reached: another try may find it. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** An HTTP status from a git host as a verdict: credentials refused, no such repository, or a retry may help. */
function httpVerdict(status: number, statusMessage: string): Verdict {
  const data = { statusCode: status, retryable: false };
  if (status === 401 || status === 403)
    return { code: 'REMOTE_AUTH', message: `the host refused the credentials (HTTP ${status})`, data };
  if (status === 404) return { code: 'REMOTE_NOT_FOUND', message: 'no such repository on the host (HTTP 404)', data };
  const retryable = status >= 500 || status === 408 || status === 429;
  return { code: 'REMOTE_ERROR', message: `HTTP ${status} ${statusMessage}`.trim(), data: { ...data, retryable } };
}

/**
 * isomorphic-git's transport errors, by their `code`: what each means for a push or a fetch.
 * A table: one row per error class isomorphic-git throws at a caller of push, fetch or
 * getRemoteInfo.
 */
const TRANSPORT_RULES: Record<string, (e: ErrorShape, message: string) => Verdict> = {
  HttpError: (e) => httpVerdict(Number(e.data?.statusCode ?? 0), String(e.data?.statusMessage ?? '')),
  UserCanceledError: () => ({
    code: 'REMOTE_AUTH',
    message: 'onAuth cancelled the request',
    data: { retryable: false },
  }),
  PushRejectedError: (e, message) => ({
    code: 'REMOTE_REJECTED',
    message,
    data: { reason: e.data?.reason, retryable: false },
  }),
  GitPushError: (e, message) => ({
    code: 'REMOTE_REJECTED',
    message,
    data: { result: e.data?.result, retryable: false },
  }),
  SmartHttpError: (_e, message) => ({
    code: 'REMOTE_ERROR',
    message: `not a smart-HTTP git server: ${message}`,
    data: { retryable: false },
  }),
};

/** The error's own message: its `message` when it has one, else its `name`, else the value as text. */
function ownMessage(err: unknown): string {
  const e = err as ErrorShape | null;
  if (typeof e?.message === 'string' && e.message !== '') return e.message;
  if (typeof e?.name === 'string' && e.name !== '') return e.name;
  return String(err);
}

/** The rule that recognises `err`, or null: then it keeps the caller's code and its own message. */
function verdictOf(err: unknown, message: string, ctx: ErrorContext): Verdict | null {
  const e = (typeof err === 'object' && err !== null ? err : {}) as ErrorShape;
  const transport =
    typeof e.code === 'string' && Object.hasOwn(TRANSPORT_RULES, e.code) ? TRANSPORT_RULES[e.code] : undefined;
  if (transport) return transport(e, message);
  if (isQuotaError(err))
    return { code: 'QUOTA_EXCEEDED', message: `${ctx.quotaHint ?? 'the storage is full'} (${message})` };
  const sys = fsErrorCode(err) ?? fsErrorCode(e.cause);
  if (sys !== undefined && NETWORK_CODES.has(sys))
    return { message: `cannot reach the host (${message})`, data: { networkCode: sys, retryable: true } };
  // fetch() in browsers and undici rejects with a bare TypeError when the host is unreachable.
  if (e.name === 'TypeError' && /fetch|network/i.test(message))
    return { message: `cannot reach the host (${message})`, data: { retryable: true } };
  return null;
}

/**
 * Any error as a typed one, the one place where errors of the platform become entity-git's: an
 * {@link EntityGitError} passes through unchanged; a full storage is `QUOTA_EXCEEDED`; a git
 * host's answer is `REMOTE_AUTH`, `REMOTE_NOT_FOUND`, `REMOTE_REJECTED` or `REMOTE_ERROR` (with
 * `retryable`); a host out of reach keeps the caller's code with `networkCode` and `retryable`;
 * anything else gets the caller's `code`. Every package calls it with its code and prefix. The
 * message is `<prefix> <what>: <the error's message>`, the original is the `cause`.
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

/**
 * @deprecated The normaliser before there was one for every package: use
 * `normaliseError(err, { code: 'STORAGE_ERROR', what: context, data })`, which it calls.
 */
export function toStorageError(err: unknown, context?: string, data: Record<string, unknown> = {}): EntityGitError {
  return normaliseError(err, { code: 'STORAGE_ERROR', ...(context === undefined ? {} : { what: context }), data });
}
