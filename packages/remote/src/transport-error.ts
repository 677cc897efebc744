import { type EntityGitError, normaliseError } from '@entity-git/git';
import { redactUrl } from './remote.js';
import { transportVerdict } from './transport-verdict.js';

/**
 * A failure of a push, a fetch or a listing of the host's refs as a typed error: the one
 * normaliser (`normaliseError`, with the git host's answers recognised by `transportVerdict`) with this operation's words,
 * data and credentials-free URL. What it does not recognise is a `REMOTE_ERROR` another try may
 * fix (`retryable`).
 */
export function transportError(
  err: unknown,
  op: 'push' | 'fetch' | 'list',
  url: string,
  sessionId: string,
): EntityGitError {
  const safeUrl = redactUrl(url);
  return normaliseError(err, {
    code: 'REMOTE_ERROR',
    what: `${op} of session ${JSON.stringify(sessionId)} (${safeUrl})`,
    data: { op, url: safeUrl, sessionId, retryable: true },
    codeKey: 'isoCode',
    redact: (text) => text.split(url).join(safeUrl),
    classify: transportVerdict,
  });
}

/** Whether another try of a push may succeed: a host's error that says so, or a lock or storage hiccup. */
export function isRetryable(err: EntityGitError): boolean {
  if (err.code.startsWith('REMOTE_')) return err.data.retryable === true;
  return err.code === 'LOCK_TIMEOUT' || err.code === 'REF_LOCKED' || err.code === 'STORAGE_ERROR';
}
