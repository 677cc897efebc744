import { type ErrorVerdict, fsErrorCode } from '@entity-git/git';

// What a git host's answers mean, for `normaliseError`'s `classify` (transport-error.ts).

interface TransportErrorShape {
  code?: unknown;
  name?: unknown;
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
function httpVerdict(status: number, statusMessage: string): ErrorVerdict {
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
const TRANSPORT_RULES: Record<string, (e: TransportErrorShape, message: string) => ErrorVerdict> = {
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

/**
 * A git host's answer or a host out of reach, for `normaliseError(err, { classify })`: an
 * isomorphic-git transport error by its table row (`REMOTE_AUTH`, `REMOTE_NOT_FOUND`,
 * `REMOTE_REJECTED`, `REMOTE_ERROR`, each with `retryable`); a system code of an unreachable host
 * (on the error or its `cause`), or the bare `TypeError` a browser's or undici's fetch rejects with,
 * keeps the caller's code with `retryable: true` (and `networkCode`). Null for anything else.
 */
export function transportVerdict(err: unknown, message: string): ErrorVerdict | null {
  const e = (typeof err === 'object' && err !== null ? err : {}) as TransportErrorShape;
  if (typeof e.code === 'string' && Object.hasOwn(TRANSPORT_RULES, e.code)) return TRANSPORT_RULES[e.code]!(e, message);
  const sys = fsErrorCode(err) ?? fsErrorCode(e.cause);
  if (sys !== undefined && NETWORK_CODES.has(sys))
    return { message: `cannot reach the host (${message})`, data: { networkCode: sys, retryable: true } };
  if (e.name === 'TypeError' && /fetch|network/i.test(message))
    return { message: `cannot reach the host (${message})`, data: { retryable: true } };
  return null;
}
