import type { SyncResult } from '@entity-git/core';
import { EntityGitError, type Storage } from '@entity-git/git';

export interface SearchIndexOptions {
  /** The session root the repositories are in (absolute). Required. */
  root: string;
  /** The index file. Default `<root>/.entity-git-search.db`, beside the repositories. */
  file?: string;
  /** How the repositories are read. Default `nodeStorage()`. */
  storage?: Storage;
  /**
   * How long (ms) an update queued by `attach` or `enqueue` may wait for others to share its
   * transaction: the bound on how far the index lags behind a sync. Default 50.
   */
  batchMs?: number;
  /**
   * Whether the updates made from what syncs' results carry (`afterSync`, `attach`, `enqueue`)
   * are recorded on a thread of the index's own, with a connection of its own, so the syncing
   * thread only hands them over. Default true; false records them on the caller's thread (a
   * bundle that cannot ship the thread's module). The thread starts with the first such update.
   */
  writeThread?: boolean;
}

/** What one update or rebuild wrote into the index. */
export interface IndexUpdate {
  sessions: number;
  /** Messages new to the index. */
  added: number;
  /** Messages no branch holds any more, dropped. */
  removed: number;
}

/** What of a sync's result the index reads: the session, the branches it moved, HEAD, and what they gained. */
export type SyncDone = Pick<SyncResult, 'sessionId' | 'branchesMoved' | 'head' | 'extendedBranches'>;

/** An error of the index as the one class, `SEARCH_INDEX_ERROR` unless it already has its code. */
export function indexError(err: unknown, what: string): EntityGitError {
  if (err instanceof EntityGitError) return err;
  return new EntityGitError(
    'SEARCH_INDEX_ERROR',
    `${what}: ${(err as Error)?.message ?? String(err)}`,
    {},
    { cause: err },
  );
}
