import type { DagSource } from '../dag/dag-source.js';
import { EntityGitError } from '../errors.js';
import { DEFAULT_YIELD_EVERY_MS, HostYield } from '../mirror/host-yield.js';
import type { Difference, Mirror } from '../mirror/mirror.js';

export type ReconcileAction = 'unchanged' | 'backfilled' | 'repaired' | 'failed';

export interface ReconcileEntry {
  sessionId: string;
  action: ReconcileAction;
  /** What verify found before the repair (empty for `unchanged`). */
  differences: Difference[];
  /** For `failed`: why. */
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
  onProgress?: (p: ReconcileProgress) => void;
  /** Give the event loop a turn after this many ms of work (default 4; 0: never). */
  yieldEveryMs?: number;
}

export interface ReconcileReport {
  total: number;
  entries: ReconcileEntry[];
  /** True when every session ends equal to its DAG. */
  ok: boolean;
}

/**
 * Start-up reconcile (DESIGN.md §5): compare every session's DAG with its repository by node ids
 * and trailers (`verify`), backfill a session without a repository, repair one that differs
 * (`sync({ full: true })`: missing objects rewritten, damaged refs rewritten, matching commits
 * kept), and verify again. Idempotent; safe while the service runs (syncs take the session lock).
 */
export async function reconcile(options: ReconcileOptions): Promise<ReconcileReport> {
  const ids = options.sessions ?? (await options.dag.listSessions());
  const entries: ReconcileEntry[] = [];
  const host = new HostYield(options.yieldEveryMs ?? DEFAULT_YIELD_EVERY_MS);
  for (const sessionId of ids) {
    await host.due();
    let entry: ReconcileEntry;
    try {
      const before = await options.mirror.verify(sessionId);
      if (before.ok) {
        entry = { sessionId, action: 'unchanged', differences: before.differences };
      } else {
        const missing = before.differences.some((d) => d.kind === 'missing-repo');
        // While a dispatcher writes, the DAG may gain a turn between the repair and the check:
        // try again a few times before calling the session failed.
        let after = before;
        for (let attempt = 0; attempt < 3 && !after.ok; attempt++) {
          await options.mirror.sync(sessionId, { full: attempt > 0 || !missing });
          after = await options.mirror.verify(sessionId);
        }
        entry = after.ok
          ? { sessionId, action: missing ? 'backfilled' : 'repaired', differences: before.differences }
          : { sessionId, action: 'failed', differences: after.differences, error: { code: 'REPO_CORRUPT', message: after.differences.map((d) => d.detail).join('; ') } };
      }
    } catch (err) {
      const e = err instanceof EntityGitError ? err : new EntityGitError('STORAGE_ERROR', String((err as Error)?.message ?? err));
      entry = { sessionId, action: 'failed', differences: [], error: { code: e.code, message: e.message } };
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
