// The small sessions of the many-sessions benches (a person's year of agent use): their rows, the
// database they are written into, and the start-up check timed the way both benches time it.
import { performance } from 'node:perf_hooks';
import { canonicalJson, reconcile, type DagNode, type ReconcileReport } from '../../packages/core/src/index.js';
import { createNodeMirror } from '../../packages/node-fs/src/index.js';
import type { SqlStore } from '../../packages/sqlite/src/index.js';
import { BASE_TIME, replyTurns } from './conversation.js';

export const sessionId = (i: number) => `s${String(i).padStart(6, '0')}`;

/** A small session's nodes: `turns` turns of a user message and a reply, ~330 characters of text each. */
export function sessionNodes(i: number, turns: number, from = 0): DagNode[] {
  return replyTurns(sessionId(i), 0x5e55 + i * 7919 + from, turns, from);
}

/**
 * `count` sessions of `turns` turns written straight into entity-git's layout (default names) in
 * one transaction; returns the canonical message JSON a session holds, in bytes.
 */
export async function fillSessions(db: SqlStore['db'], count: number, turns: number): Promise<number> {
  let messageBytes = 0;
  await db.transaction().execute(async (trx) => {
    for (let start = 0; start < count; start += 500) {
      const ids = Array.from({ length: Math.min(500, count - start) }, (_, k) => start + k);
      await trx
        .insertInto('sessions')
        .values(ids.map((i) => ({ id: sessionId(i), title: `Session ${i}`, created_at: BASE_TIME + i })))
        .execute();
      const nodes = ids.flatMap((i) => sessionNodes(i, turns));
      for (const n of nodes) messageBytes += Buffer.byteLength(canonicalJson(n));
      for (let k = 0; k < nodes.length; k += 100) {
        await trx
          .insertInto('nodes')
          .values(nodes.slice(k, k + 100).map((n) => ({ ...n, content: JSON.stringify(n.content), metadata: null })))
          .execute();
      }
    }
  });
  return messageBytes / count;
}

/** Peak RSS while `fn` runs, sampled every 20 ms (and before and after). */
export async function withPeakRss<T>(
  fn: () => Promise<T>,
): Promise<{ value: T; ms: number; peak: number; before: number }> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 20);
  const t0 = performance.now();
  try {
    const value = await fn();
    return { value, ms: performance.now() - t0, peak: Math.max(peak, process.memoryUsage.rss()), before };
  } finally {
    clearInterval(timer);
  }
}

/**
 * `reconcile` with a new mirror (nothing in memory), timing the sessions after the first hundred
 * apart (where the per-session goal applies), progress printed every tenth as the CLI shows it.
 */
export async function timedReconcile(
  store: SqlStore,
  root: string,
  options: { full?: boolean; sessions?: string[] } = {},
) {
  const mirror = createNodeMirror({ dag: store.dag, root });
  let hundredth = 0;
  let shown = 0;
  const t0 = performance.now();
  const r = await withPeakRss(() =>
    reconcile({
      dag: store.dag,
      mirror,
      ...options,
      onProgress: (p) => {
        if (p.done === 100) hundredth = performance.now();
        if (p.done * 10 >= (shown + 1) * p.total) {
          shown++;
          process.stderr.write(`  ${p.done}/${p.total}\r`);
        }
      },
    }),
  );
  process.stderr.write('\n');
  const report = r.value as ReconcileReport;
  const n = report.total;
  const pastHundred = n > 100 ? (r.ms - (hundredth - t0)) / (n - 100) : r.ms / Math.max(1, n);
  return { ...r, report, t0, hundredth, pastHundred };
}
