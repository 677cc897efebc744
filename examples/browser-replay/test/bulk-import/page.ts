// In Chromium, for bulk-import.e2e.test.ts: the same rows into two IndexedDB DAGs, one with the
// bulk write (`importSessionRows`, one transaction) and one row by row (`importRows`, a
// transaction a node), then what each holds, its counts and its refusals, on `window.bulk`.
import { importRows, openIdbDag, type IdbDag } from '@entity-git/browser-fs';
import type { DagNode, Session } from '@entity-git/core';

const S = 'bulk-s';
const session: Session = {
  id: S,
  title: 'Bulk',
  agent_id: 'agent-1',
  model: 'm',
  project_id: null,
  head: null,
  created_at: 1_700_000_000,
  metadata: { k: [1, 'two'] },
};
/** A conversation with tool calls and a fork: user, assistant (with a tool result riding on it). */
function rows(n: number): DagNode[] {
  const out: DagNode[] = [];
  let prev: string | null = null;
  for (let seq = 1; seq <= n; seq++) {
    const role = seq % 3 === 1 ? 'user' : seq % 3 === 2 ? 'assistant' : 'tool';
    const id = `n${seq}`;
    out.push({
      id,
      session_id: S,
      seq,
      role,
      content: role === 'tool' ? { result: seq } : `message ${seq} ✓`,
      predecessor: role === 'tool' ? null : seq === 40 ? 'n10' : prev,
      caller: role === 'tool' ? prev : null,
      created_at: 1_700_000_000 + seq,
      metadata: seq % 7 === 0 ? { tag: seq } : null,
    } as DagNode);
    if (role !== 'tool') prev = id;
  }
  return out;
}

async function dump(dag: IdbDag) {
  const nodes: DagNode[] = [];
  for await (const n of dag.nodesAfter(S, 0)) nodes.push(n);
  return { session: await dag.getSession(S), nodes, sessions: await dag.listSessions() };
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { code?: string }) => e.code ?? String(e),
  );

async function run() {
  const all = rows(600);
  const head = { ...session, head: all.at(-2)!.id };
  const bulk = await openIdbDag({ name: 'bulk-one-transaction' });
  const single = await openIdbDag({ name: 'bulk-row-by-row' });
  let t = performance.now();
  const a1 = await bulk.importSessionRows(head, all);
  const bulkMs = performance.now() - t;
  t = performance.now();
  const b1 = await importRows({ into: single, session: head, nodes: all, batchSize: 1 });
  const singleMs = performance.now() - t;
  const first = { bulk: await dump(bulk), single: await dump(single) };
  // Again with a filled node, a new one and a renamed session: updated, added, the row taken over.
  const more = [...all.slice(0, 5), { ...all[5]!, content: 'filled since' }, ...rows(601).slice(600)];
  const again = { ...head, title: 'Renamed', head: 'n601' };
  const a2 = await bulk.importSessionRows(again, more);
  const b2 = await importRows({ into: single, session: again, nodes: more, batchSize: 1 });
  const second = { bulk: await dump(bulk), single: await dump(single) };
  // Rows that mean other nodes here: refused, nothing written.
  const seqTaken = [{ ...all[0]!, id: 'other' }];
  const idMoved = [{ ...all[0]!, seq: 9999 }];
  const refusals = {
    bulk: [await codeOf(bulk.importSessionRows(again, seqTaken)), await codeOf(bulk.importSessionRows(again, idMoved))],
    single: [
      await codeOf(importRows({ into: single, session: again, nodes: seqTaken, batchSize: 1 })),
      await codeOf(importRows({ into: single, session: again, nodes: idMoved, batchSize: 1 })),
    ],
    after: (await dump(bulk)).nodes.length,
  };
  const counts = (r: { created: boolean; added: number; updated: number; unchanged: number; lastSeq: number }) => ({
    created: r.created,
    added: r.added,
    updated: r.updated,
    unchanged: r.unchanged,
    lastSeq: r.lastSeq,
  });
  return {
    first,
    second,
    counts: { bulk: [counts(a1), counts(a2)], single: [counts(b1), counts(b2)] },
    refusals,
    ms: { bulk: bulkMs, single: singleMs },
  };
}

(window as unknown as { bulk: Promise<unknown> }).bulk = run().catch((e: Error) => ({
  error: `${e.name}: ${e.message}`,
}));
