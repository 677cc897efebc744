import { openRepo, type RepoContext, repoExists } from '@entity-git/core/repository';
import { type EntityGitError, isEntityGitError, normaliseError, type Identity } from '@entity-git/git';
import { fetchSession } from './fetch.js';
import type { FetchOptions, FetchResult } from './fetch-types.js';
import { defineRemote } from './remote.js';
import { type RemoteTarget, targetContext } from './target.js';

export interface RestoreOptions extends RemoteTarget {
  /** The sessions to restore: their ids, e.g. `await dag.listSessions()` (a git host cannot list them). */
  sessions: Iterable<string> | AsyncIterable<string>;
  /** Sessions restored at once. Default 4. */
  concurrency?: number;
  /**
   * A session that already has a repository: `fetch` (default) brings it up to date like
   * {@link fetchSession} (diverged branches are left alone); `skip` leaves it untouched.
   */
  existing?: 'fetch' | 'skip';
  /** Called as each session finishes. */
  onProgress?: (entry: RestoreEntry, progress: { done: number }) => void;
  identity?: Identity;
}

export interface RestoreEntry {
  sessionId: string;
  /**
   * `restored`: cloned into a new repository; `fetched`: an existing repository was brought up to
   * date; `skipped`: existing, left alone; `missing`: the host has no such repository (404);
   * `empty`: the host's repository has no branch; `failed`: see `error`.
   */
  action: 'restored' | 'fetched' | 'skipped' | 'missing' | 'empty' | 'failed';
  result?: FetchResult;
  error?: EntityGitError;
}

export interface RestoreReport {
  entries: RestoreEntry[];
  counts: Record<RestoreEntry['action'], number>;
}

/**
 * Restore session repositories from the git host alone — a fresh machine, or a lost root. Each
 * session's repository is cloned into `<root>/<idSegment(session)>/` (every branch, HEAD from the
 * host's HEAD record, the working tree checked out where the storage has one), so that the
 * mirror then finds nothing to do for the same DAG: `verify` is ok, and `sync` writes no object
 * and moves no ref (its first run only rebuilds its cache file). Never throws for one session's
 * failure: each session gets an entry. Each session is one fetch ({@link fetchSession} with
 * `create`), `concurrency` of them at once.
 */
export async function restoreSessions(options: RestoreOptions): Promise<RestoreReport> {
  const { storage, root, lock } = options;
  const restoring: RemoteTarget = { remote: defineRemote(options.remote), storage, root, lock };
  const ctx = targetContext(restoring);
  const entries: RestoreEntry[] = [];
  const counts: RestoreReport['counts'] = { restored: 0, fetched: 0, skipped: 0, missing: 0, empty: 0, failed: 0 };
  const next = sessionsOf(options.sessions);
  let done = 0;
  const worker = async (): Promise<void> => {
    for (let id = await next(); id !== null; id = await next()) {
      const entry = await restoreOne(ctx, restoring, options, id);
      entries.push(entry);
      counts[entry.action]++;
      done++;
      try {
        options.onProgress?.(entry, { done });
      } catch {
        // a progress listener cannot break the restore
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 4) }, worker));
  return { entries, counts };
}

/** The next session id of a sync or async iterable, shared by the workers; null at the end. */
function sessionsOf(sessions: Iterable<string> | AsyncIterable<string>): () => Promise<string | null> {
  const iterator = (
    Symbol.asyncIterator in sessions
      ? (sessions as AsyncIterable<string>)[Symbol.asyncIterator]()
      : (sessions as Iterable<string>)[Symbol.iterator]()
  ) as AsyncIterator<string> | Iterator<string>;
  return async () => {
    const step = await iterator.next();
    return step.done ? null : step.value;
  };
}

/** One session restored (or fetched, or skipped): its entry, never a throw. */
async function restoreOne(
  ctx: RepoContext,
  target: RemoteTarget,
  options: RestoreOptions,
  sessionId: string,
): Promise<RestoreEntry> {
  try {
    const exists = await repoExists(ctx, openRepo(ctx, sessionId));
    if (exists && options.existing === 'skip') return { sessionId, action: 'skipped' };
    const fetchOptions: FetchOptions = { ...target, sessionId, create: true, head: exists ? 'auto' : 'remote' };
    if (options.identity !== undefined) fetchOptions.identity = options.identity;
    const result: FetchResult = await fetchSession(fetchOptions);
    if (result.empty) return { sessionId, action: 'empty', result };
    return { sessionId, action: result.repositoryCreated ? 'restored' : 'fetched', result };
  } catch (err) {
    if (isEntityGitError(err, 'REMOTE_NOT_FOUND')) return { sessionId, action: 'missing', error: err };
    const error = normaliseError(err, {
      code: 'REMOTE_ERROR',
      what: `restore of session ${JSON.stringify(sessionId)}`,
      data: { sessionId, retryable: true },
    });
    return { sessionId, action: 'failed', error };
  }
}
