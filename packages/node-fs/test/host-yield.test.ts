import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { MemoryDag, type DagNode, type DagSource } from '@entity-git/core';
import { afterAll, describe, expect, it } from 'vitest';
import { createNodeMirror } from '../src/index.js';
import { git, tempDir as newTempDir } from './helpers.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const d = newTempDir('eg-yield-');
  dirs.push(d);
  return d;
};

const SID = 'long';
const TURNS = 600;

async function longDag(): Promise<MemoryDag> {
  const dag = new MemoryDag();
  await dag.createSession({ id: SID, title: 'long', created_at: 1_700_000_000 });
  let last: string | null = null;
  for (let t = 0; t < TURNS; t++) {
    for (const role of ['user', 'assistant'] as const) {
      const seq = 2 * t + (role === 'user' ? 1 : 2);
      const n: DagNode = {
        id: `n${seq}`,
        session_id: SID,
        seq,
        role,
        content: `${role} ${t} `.repeat(40),
        predecessor: last,
        caller: null,
        created_at: 1_700_000_000 + seq,
        metadata: null,
      };
      await dag.addNode(n);
      last = n.id;
    }
  }
  return dag;
}

/** The DAG, recording for each node read how many macrotask ticks the host has had so far. */
function observed(dag: DagSource, ticks: () => number, seen: number[]): DagSource {
  return {
    listSessions: () => dag.listSessions(),
    getSession: (id) => dag.getSession(id),
    getHead: (id) => dag.getHead(id),
    async *nodesAfter(id, after, options) {
      for await (const n of dag.nodesAfter(id, after, options)) {
        seen.push(ticks());
        yield n;
      }
    },
  };
}

describe('a sync gives the host event loop back (yieldEveryMs)', () => {
  it('macrotasks run while an in-memory DAG is read, by default; never with yieldEveryMs 0; the commits are the same', async () => {
    const dag = await longDag();
    const tips: string[] = [];
    const distinct: number[] = [];
    for (const yieldEveryMs of [undefined, 0]) {
      let ticks = 0;
      let on = true;
      const tick = () => {
        ticks++;
        if (on) setImmediate(tick);
      };
      setImmediate(tick);
      const seen: number[] = [];
      const root = tempDir();
      const mirror = createNodeMirror({
        dag: observed(dag, () => ticks, seen),
        root,
        ...(yieldEveryMs === undefined ? {} : { yieldEveryMs }),
      });
      await mirror.sync(SID);
      on = false;
      expect(seen).toHaveLength(2 * TURNS);
      distinct.push(new Set(seen).size);
      tips.push(git(join(root, SID), 'rev-parse', 'refs/heads/main'));
    }
    // Reading 1,200 nodes (hashing each) is far more than 4 ms of work: the host had turns.
    expect(distinct[0]).toBeGreaterThan(1);
    // Without yields the read loop is one task: no macrotask ran between two nodes.
    expect(distinct[1]).toBe(1);
    expect(tips[0]).toBe(tips[1]);
  }, 120_000);

  it('refuses a negative yieldEveryMs', () => {
    expect(() => createNodeMirror({ dag: new MemoryDag(), root: tempDir(), yieldEveryMs: -1 })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
  });
});
