import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres, type SqlStore } from '../src/index.js';
import { freshDatabase } from './helpers/postgres.js';

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function twoStores(): Promise<[SqlStore, SqlStore]> {
  const database = await freshDatabase();
  cleanups.push(database.drop);
  // Two pools, as two server processes would have: appends race on separate connections.
  const a = await openPostgres({ connectionString: database.url, maxConnections: 8 });
  const b = await openPostgres({ connectionString: database.url, maxConnections: 8 });
  cleanups.push(
    () => a.close(),
    () => b.close(),
  );
  return [a, b];
}

describe('the writer on PostgreSQL under concurrency', () => {
  it('160 appends racing on 16 connections give seqs 1..160 in each session, no gap, no duplicate', async () => {
    const [a, b] = await twoStores();
    await a.writer.createSession({ id: 's1' });
    await a.writer.createSession({ id: 's2' });
    const told = new Map<string, number>();
    await Promise.all(
      Array.from({ length: 320 }, async (_, i) => {
        const store = i % 2 === 0 ? a : b;
        const sessionId = i % 4 < 2 ? 's1' : 's2';
        const node = await store.writer.appendNode({
          id: `n${i}`,
          session_id: sessionId,
          role: 'user',
          content: i,
          metadata: { pending: true },
        });
        told.set(node.id, node.seq);
        if (i % 3 === 0) await store.writer.fillNode(sessionId, node.id, `filled ${i}`, null);
        if (i % 5 === 0) await store.writer.setHead(sessionId, node.id);
      }),
    );
    for (const sessionId of ['s1', 's2']) {
      const nodes = [];
      for await (const n of b.dag.nodesAfter(sessionId, 0, { batchSize: 33 })) nodes.push(n);
      expect(nodes.map((n) => n.seq)).toEqual(Array.from({ length: 160 }, (_, i) => i + 1));
      for (const n of nodes) expect(told.get(n.id)).toBe(n.seq);
      const head = await a.dag.getHead(sessionId);
      expect(nodes.some((n) => n.id === head)).toBe(true);
    }
  });

  it('one node id appended to two sessions at once: one wins, the other is DAG_DUPLICATE_ID', async () => {
    const [a, b] = await twoStores();
    await a.writer.createSession({ id: 's' });
    await a.writer.createSession({ id: 't' });
    for (let round = 0; round < 10; round++) {
      const results = await Promise.allSettled([
        a.writer.appendNode({ id: `same${round}`, session_id: 's', role: 'user', content: 's' }),
        b.writer.appendNode({ id: `same${round}`, session_id: 't', role: 'user', content: 't' }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(rejected.reason).toMatchObject({ name: 'EntityGitError', code: 'DAG_DUPLICATE_ID' });
    }
  });
});
