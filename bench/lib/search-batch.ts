// The index's update alone, its own transaction against a batch's, on the same kind of update in
// the same run, alternating: a turn appended to sessions the corpus has no repository for (their
// results made as a sync's would be: the branch carried forward from the tip the index holds, the
// new messages with their nodes; commit ids a hash, as for the rest of those sessions). No sync
// runs, so the two are compared with nothing else on the machine's clock between them.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { SearchIndex, SyncDone } from '../../packages/search/src/index.js';
import { stats } from './measure.js';
import { corpusNodes, corpusSessionId } from './search-corpus.js';

const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');

/** Each session's `main` tip and highest seq in the index file (read by the sqlite3 shell, before any timing). */
function mainTips(file: string, ids: string[]): Map<string, { tip: string; seq: number }> {
  const list = ids.map((id) => `'${id}'`).join(',');
  const out = spawnSync(
    'sqlite3',
    [
      file,
      `SELECT s.session, b.tip, (SELECT max(seq) FROM docs WHERE session = s.id) FROM sessions s
       JOIN branches b ON b.session = s.id AND b.name = 'main' WHERE s.session IN (${list})`,
    ],
    { encoding: 'utf8' },
  ).stdout;
  const tips = new Map<string, { tip: string; seq: number }>();
  for (const line of out.trim().split('\n')) {
    const [id, tip, seq] = line.split('|') as [string, string, string];
    tips.set(id, { tip, seq: Number(seq) });
  }
  return tips;
}

// What a sync leaves behind, made without one: the CPU's caches filled by 8 MB touched, and the
// heap by 50,000 short-lived objects. Run before an update, outside its timing.
const SWEEP = new Uint8Array(8 << 20);
let swept = 0;
function sweep(): void {
  for (let i = 0; i < SWEEP.length; i += 64) SWEEP[i] = (SWEEP[i]! + 1) & 255;
  const garbage = Array.from({ length: 50_000 }, (_, i) => ({ i, s: `x${i}` }));
  swept += garbage.length;
}

/**
 * `reps` times: `size` sessions updated one transaction each, `size` others each after a sweep
 * (the caches and heap as a sync leaves them), then `size` others queued and flushed once.
 */
export async function measureBatching(
  index: SearchIndex,
  sessions: number[],
  o: { size: number; reps: number; file: string },
) {
  const known = mainTips(o.file, sessions.map(corpusSessionId));
  let next = 0;
  const result = (): SyncDone => {
    const i = sessions[next++ % sessions.length]!;
    const id = corpusSessionId(i);
    const at = known.get(id)!;
    const nodes = corpusNodes(i, 1, at.seq);
    const turn = Math.ceil(nodes[1]!.seq / 2);
    const tip = sha1(`${id} turn ${turn}`);
    const from = at.tip;
    known.set(id, { tip, seq: nodes[1]!.seq });
    const messages = nodes.map((node) => ({ blob: sha1(`${tip} ${node.id}`), node, turn, commit: tip }));
    return {
      sessionId: id,
      branchesMoved: ['main'],
      head: 'main',
      extendedBranches: [{ name: 'main', from, tip, messages }],
    };
  };
  const alone: number[] = [];
  const afterSweep: number[] = [];
  const batched: number[] = [];
  for (let rep = 0; rep < o.reps; rep++) {
    for (let k = 0; k < 2 * o.size; k++) {
      const r = result();
      if (k % 2 === 1) sweep();
      const t0 = performance.now();
      await index.afterSync(r);
      (k % 2 === 1 ? afterSweep : alone).push(performance.now() - t0);
    }
    const batch = Array.from({ length: o.size }, result);
    const t0 = performance.now();
    for (const r of batch) index.enqueue(r);
    const count = await index.flush();
    const took = performance.now() - t0;
    if (count.carried !== o.size) throw new Error(`${count.read} of ${o.size} queued updates were read`);
    for (let k = 0; k < o.size; k++) batched.push(took / o.size);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  if (swept === 0) throw new Error('no sweep ran');
  return {
    alone: { ...stats(alone), mean: mean(alone) },
    afterSweep: { ...stats(afterSweep), mean: mean(afterSweep) },
    batched: { ...stats(batched), mean: mean(batched) },
  };
}
