import type { DagSource } from '../dag/dag-source.js';
import { normaliseError } from '@entity-git/git';
import { DEFAULT_YIELD_EVERY_MS, HostYield } from '../mirror/host-yield.js';
import type { Difference, Mirror, SyncResult } from '../mirror/mirror.js';
import { readChangeMarkers } from '../dag/change-markers.js';

/**
 * `busy`: the session could not be judged now, and nothing says it is damaged — another process
 * held its sync lock past the wait (`LOCK_TIMEOUT`), or its DAG was written to while the repair
 * was checked (the repository is then behind rows that arrived after the repair read them). The
 * next sync continues it; a busy session does not make the report fail. `empty`: a session
 * without a repository whose DAG has no node: its repository was made and holds no commit, and
 * nothing of it was mirrored (an application's chat with no row in its messages table).
 */
export type ReconcileAction = 'unchanged' | 'backfilled' | 'empty' | 'repaired' | 'busy' | 'failed';

export interface ReconcileEntry {
  sessionId: string;
  action: ReconcileAction;
  /** What verify found before the repair (empty for `unchanged`). */
  differences: Difference[];
  /** For `failed`: why. For `busy`: what kept it from being judged. */
  error?: { code: string; message: string };
}

export interface ReconcileProgress extends ReconcileEntry {
  done: number;
  total: number;
}

export interface ReconcileOptions {
  dag: DagSource;
  mirror: Mirror;
  /** Only these sessions (default: every session of the DagSource). */
  sessions?: string[];
  /**
   * Compare every session in full. Default false: a session whose DAG change marker and refs
   * equal what its last sync recorded is `unchanged` without reading its DAG (see
   * `VerifyOptions.quick`; the markers of all the sessions are read at once first, when the source
   * has `changeMarkers`); the others, and every session of a source without markers, are compared
   * in full.
   */
  full?: boolean;
  onProgress?: (p: ReconcileProgress) => void;
  /** Give the event loop a turn after this many ms of work (default 2; 0: never). */
  yieldEveryMs?: number;
}

export interface ReconcileReport {
  total: number;
  entries: ReconcileEntry[];
  /** True when no session failed: every one ends equal to its DAG, or is `busy`. */
  ok: boolean;
}

/**
 * Start-up reconcile (docs/design.md, 'Safety rules', consistency): compare every session's DAG with its repository by node ids
 * and trailers (`verify`), backfill a session without a repository, repair one that differs
 * (`sync({ full: true })`: missing objects rewritten, damaged refs rewritten, matching commits
 * kept), and check the repository against what that sync read and built (`verify` with `synced`:
 * no second read of the DAG, no commit built twice; docs/design.md, 'Verify after a sync').
 * Idempotent; safe while the service runs (syncs take the session lock). Each session id is
 * checked where it enters the mirror (its `verify` and `sync`).
 */
export async function reconcile(options: ReconcileOptions): Promise<ReconcileReport> {
  const ids = options.sessions ?? (await options.dag.listSessions());
  const entries: ReconcileEntry[] = [];
  const host = new HostYield(options.yieldEveryMs ?? DEFAULT_YIELD_EVERY_MS);
  const quick = options.full !== true;
  // Read once, before any session is checked: each session is judged as of this read (a sync that
  // ran since recorded a later marker, so that session gets the full check, never a wrong "unchanged").
  const markers = quick ? await readChangeMarkers(options.dag, options.sessions) : new Map<string, string | null>();
  // Between sessions and between the steps of one: the sync and verify give turns inside theirs
  // (the mirror's `yieldEveryMs`), on the one clock of the host's last turn.
  for (const sessionId of ids) {
    await host.due();
    let entry: ReconcileEntry;
    try {
      const before = await options.mirror.verify(
        sessionId,
        markers.has(sessionId) ? { quick, marker: markers.get(sessionId)! } : { quick },
      );
      if (before.ok) {
        if (quick && before.unchanged !== true) await recordMarker(options, sessionId, markers);
        entry = { sessionId, action: 'unchanged', differences: before.differences };
      } else {
        const missing = before.differences.some((d) => d.kind === 'missing-repo');
        // A row that changed since the last sync needs only a sync, not a repair.
        const light =
          missing || before.differences.every((d) => d.kind === 'meta-differs' || d.kind === 'extra-branch');
        // While a dispatcher writes, the DAG may gain a turn between the repair and the check:
        // try again a few times before calling the session failed.
        let after = before;
        let synced: SyncResult | null = null;
        for (let attempt = 0; attempt < 3 && !after.ok; attempt++) {
          await host.due();
          synced = await options.mirror.sync(sessionId, { full: attempt > 0 || !light });
          await host.due();
          after = await options.mirror.verify(sessionId, { synced });
        }
        // Whether the DAG changed between the repair's read and its check (`dagChanged`): the
        // differences are then rows the repair never saw, not damage.
        const written = !after.ok && after.dagChanged === true;
        // A backfill reads the whole DAG: none of its nodes read, the DAG has none.
        const made = missing && after.ok && synced?.nodesRead === 0 ? 'empty' : 'backfilled';
        entry = after.ok
          ? { sessionId, action: missing ? made : 'repaired', differences: before.differences }
          : written
            ? {
                sessionId,
                action: 'busy',
                differences: after.differences,
                error: {
                  code: 'DAG_CHANGED',
                  message: `the DAG of ${sessionId} was written to while its repair was checked; the next sync continues it`,
                },
              }
            : {
                sessionId,
                action: 'failed',
                differences: after.differences,
                error: { code: 'REPO_CORRUPT', message: after.differences.map((d) => d.detail).join('; ') },
              };
      }
    } catch (err) {
      const e = normaliseError(err, { code: 'STORAGE_ERROR' });
      // Another process holds the session's sync lock (a long sync): busy, not broken.
      entry =
        e.code === 'LOCK_TIMEOUT'
          ? { sessionId, action: 'busy', differences: [], error: { code: e.code, message: e.message } }
          : { sessionId, action: 'failed', differences: [], error: { code: e.code, message: e.message } };
    }
    entries.push(entry);
    try {
      options.onProgress?.({ ...entry, done: entries.length, total: ids.length });
    } catch {
      // progress display errors do not stop a reconcile
    }
  }
  return { total: ids.length, entries, ok: entries.every((e) => e.action !== 'failed') };
}

/**
 * After a full check found the repository equal to a DAG that has a marker: a sync (nothing to
 * commit) records the marker, so the next check of the session is the quick one. A repository
 * last synced before its source had markers (a version without them, an application's database
 * read before its markers were computed) would otherwise be checked in full at every start-up,
 * since only a sync records one.
 */
async function recordMarker(
  options: ReconcileOptions,
  sessionId: string,
  markers: ReadonlyMap<string, string | null>,
): Promise<void> {
  try {
    const marker = markers.has(sessionId) ? markers.get(sessionId) : await options.dag.changeMarker?.(sessionId);
    if (marker !== null && marker !== undefined) await options.mirror.sync(sessionId);
  } catch {
    // The session is equal to its DAG whatever this sync did: without a marker recorded, the next
    // check is the full one again.
  }
}
