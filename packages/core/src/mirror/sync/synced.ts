import type { Derivation } from '../../model/derive.js';
import type { Session } from '../../model/types.js';
import type { Layout, SyncResult } from '../mirror.js';
import type { Known } from '../repo/state.js';
import type { SessionId } from '../session-id.js';
import type { CheckedOut } from './checkout.js';

/**
 * What one sync left the repository holding, kept beside the result it returned (a weak map: as
 * long as the caller keeps the result), so the check after it (`verify(id, { synced })`) compares
 * the repository with the DAG this sync read and the commits it built, without reading the DAG
 * or building a commit again.
 */
export interface SyncRecord {
  sessionId: SessionId;
  /** The session row the sync read. */
  session: Session;
  layout: Layout;
  /** meta.json's content. */
  metaBytes: Uint8Array;
  /** The DAG as the sync read and derived it. */
  derivation: Derivation<Known>;
  /** Each branch's commits, oldest first, as the sync left them (a copy: a later sync carries the builds on). */
  commits: ReadonlyMap<string, readonly string[]>;
  /**
   * Every commit of every branch was built by this sync from the DAG it read, none kept from the
   * repository or an earlier sync: the ids are those a fresh backfill of that DAG writes.
   */
  built: boolean;
}

/** The record of the sync that ends with `c`. */
export function syncRecord(c: CheckedOut): SyncRecord {
  const commits = new Map<string, readonly string[]>();
  let built = c.work.kind === 'derive';
  for (const [name, b] of c.builds) {
    commits.set(name, [...b.commits]);
    if (built && !b.commits.every((oid) => c.created.has(oid))) built = false;
  }
  const { sessionId, session, layout, metaBytes, derivation } = c;
  return { sessionId, session, layout, metaBytes, derivation, commits, built };
}

/** The records of the syncs whose results a caller still holds. */
export type SyncRecords = WeakMap<SyncResult, SyncRecord>;
