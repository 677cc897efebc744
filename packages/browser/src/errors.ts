import { EntityGitError, isEntityGitError } from '@entity-git/core';

export const PREFIX = '[browser-fs]';

/**
 * Whether `err` says the origin's storage is full. Chromium reports it as a `QuotaExceededError`
 * DOMException (legacy code 22) on the request or on the aborted transaction; IndexedDB wrappers
 * sometimes keep the original as `cause` or `inner`.
 */
export function isQuotaError(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 4) return false;
  const e = err as { name?: unknown; code?: unknown; cause?: unknown; inner?: unknown; error?: unknown };
  if (e.name === 'QuotaExceededError' || (e.name !== undefined && e.code === 22)) return true;
  return isQuotaError(e.cause, depth + 1) || isQuotaError(e.inner, depth + 1) || isQuotaError(e.error, depth + 1);
}

function message(err: unknown): string {
  const e = err as { message?: unknown; name?: unknown } | null;
  return typeof e?.message === 'string' && e.message !== ''
    ? e.message
    : typeof e?.name === 'string'
      ? e.name
      : String(err);
}

export function quotaError(err: unknown, what: string, data: Record<string, unknown> = {}): EntityGitError {
  return new EntityGitError(
    'QUOTA_EXCEEDED',
    `${PREFIX} ${what}: the browser's storage quota for this origin is used up (${message(err)}); free space or call requestPersistentStorage()`,
    data,
    { cause: err },
  );
}

/** LightningFS's own fs-wide lock gives up after ten minutes. */
function isLightningTimeout(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return typeof e === 'object' && e !== null && (e.code === 'ETIMEDOUT' || e.message === 'Mutex timeout');
}

/**
 * An error of the file system as core expects it: fs errors keep their Node `code` (core maps
 * ENOENT, EEXIST… itself), quota and lock time-outs become typed errors.
 */
export function fsError(err: unknown, op: string, path: string): unknown {
  if (isEntityGitError(err)) return err;
  if (isQuotaError(err)) return quotaError(err, `${op} ${path}`, { op, path });
  if (isLightningTimeout(err)) {
    return new EntityGitError(
      'LOCK_TIMEOUT',
      `${PREFIX} ${op} ${path}: another tab kept the file system busy too long`,
      { op, path },
      { cause: err },
    );
  }
  return err;
}

/** An IndexedDB failure of the DAG store as a typed error. */
export function dbError(err: unknown, what: string): EntityGitError {
  if (isEntityGitError(err)) return err;
  if (isQuotaError(err)) return quotaError(err, what);
  return new EntityGitError(
    'DB_ERROR',
    `${PREFIX} ${what}: ${message(err)}`,
    { name: (err as { name?: unknown })?.name ?? null },
    { cause: err },
  );
}

/** An error with a Node-style `code`, like the ones LightningFS throws. */
export function codeError(code: string, path: string): Error & { code: string } {
  return Object.assign(new Error(`${code}: ${path}`), { code });
}
