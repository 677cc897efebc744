import { EntityGitError, isEntityGitError } from '@entity-git/core';
import { isQuotaError, normaliseError } from '@entity-git/git';

export const PREFIX = '[browser-fs]';

/** What a full origin storage means to the user: where the space went, and what to do. */
const QUOTA_HINT =
  "the browser's storage quota for this origin is used up; free space or call requestPersistentStorage()";

/**
 * A failure of the browser's storage or DAG store as a typed error: the one normaliser with this
 * package's prefix; a full origin storage (a `QuotaExceededError`, on the error or on what it
 * wraps) is `QUOTA_EXCEEDED` with what to do about it.
 */
export function browserError(
  err: unknown,
  code: 'STORAGE_ERROR' | 'DB_ERROR',
  what: string,
  data: Record<string, unknown> = {},
): EntityGitError {
  return normaliseError(err, { code, prefix: PREFIX, what, data, quotaHint: QUOTA_HINT });
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
  if (isQuotaError(err)) return browserError(err, 'STORAGE_ERROR', `${op} ${path}`, { op, path });
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

/** An IndexedDB failure of the DAG store as a typed error (`DB_ERROR`, or `QUOTA_EXCEEDED`). */
export function dbError(err: unknown, what: string): EntityGitError {
  return browserError(err, 'DB_ERROR', what, { name: (err as { name?: unknown })?.name ?? null });
}

/** An error with a Node-style `code`, like the ones LightningFS throws. */
export function codeError(code: string, path: string): Error & { code: string } {
  return Object.assign(new Error(`${code}: ${path}`), { code });
}
