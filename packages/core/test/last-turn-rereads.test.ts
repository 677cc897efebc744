import { memoryStorage } from '@entity-git/git';
import { describe, expect, it } from 'vitest';
import { GOLDEN_SESSION, writeGolden } from '../../test-utils/src/golden-dag.js';
import { GOLDEN_MIRROR_TIPS } from '../../test-utils/src/mirror-suite.js';
import { createMirror, MemoryDag, type DagNode, type DagSource, type Mirror } from '../src/index.js';

const SID = GOLDEN_SESSION.id;

/**
 * The golden DAG as an application's store would give it: a node's content may be written again
 * in place (`rewrite`), and the source says whether its last turns may change so. Records the
 * seq each read starts after.
 */
class RewritingDag implements DagSource {
  readonly afterSeqs: number[] = [];
  readonly rewrites = new Map<string, string>();
  readonly lastTurnMayChange: boolean;
  readonly #dag: MemoryDag;
  constructor(dag: MemoryDag, lastTurnMayChange: boolean) {
    this.#dag = dag;
    this.lastTurnMayChange = lastTurnMayChange;
  }
  listSessions() {
    return this.#dag.listSessions();
  }
  getSession(id: string) {
    return this.#dag.getSession(id);
  }
  async *nodesAfter(id: string, after = 0, options?: { batchSize?: number }): AsyncIterable<DagNode> {
    this.afterSeqs.push(after);
    for await (const node of this.#dag.nodesAfter(id, after, options))
      yield this.rewrites.has(node.id) ? { ...node, content: this.rewrites.get(node.id)! } : node;
  }
}

async function golden(lastTurnMayChange: boolean): Promise<{ dag: RewritingDag; mirror: Mirror }> {
  const memory = new MemoryDag();
  await writeGolden(memory);
  const dag = new RewritingDag(memory, lastTurnMayChange);
  return { dag, mirror: createMirror({ dag, storage: memoryStorage(), root: '/sessions' }) };
}

const tips = async (mirror: Mirror) => Object.fromEntries((await mirror.branches(SID)).map((b) => [b.name, b.commit]));

describe('a source whose last turn may change (DagSource.lastTurnMayChange)', () => {
  it('each sync reads again from the first node of the earliest last turn of any path', async () => {
    const { dag, mirror } = await golden(true);
    await mirror.sync(SID);
    expect(await tips(mirror)).toEqual(GOLDEN_MIRROR_TIPS);
    dag.afterSeqs.length = 0;
    const again = await mirror.sync(SID);
    // The leaves' last turns start at u2 (seq 7, retry-a4r's), u2e, u3 and u4: read after seq 6.
    expect(dag.afterSeqs).toEqual([6]);
    expect(again).toMatchObject({ commitsWritten: 0, branchesMoved: [] });
    expect(await tips(mirror)).toEqual(GOLDEN_MIRROR_TIPS);
  });

  it("a reply of a branch's last turn written again moves that branch to a fresh mirror's commit", async () => {
    const { dag, mirror } = await golden(true);
    await mirror.sync(SID);
    dag.rewrites.set('a5', 'No FIXME anywhere.');
    const again = await mirror.sync(SID);
    expect(again).toMatchObject({ commitsWritten: 1, branchesMoved: ['fork-u2e'] });
    const fresh = createMirror({ dag, storage: memoryStorage(), root: '/sessions' });
    await fresh.sync(SID);
    const expected = await tips(fresh);
    expect(expected['fork-u2e']).not.toBe(GOLDEN_MIRROR_TIPS['fork-u2e']);
    expect(await tips(mirror)).toEqual(expected);
  });

  it('without it, a node a commit holds is not read again (the rewrite stays unmirrored)', async () => {
    const { dag, mirror } = await golden(false);
    await mirror.sync(SID);
    dag.rewrites.set('a5', 'No FIXME anywhere.');
    const again = await mirror.sync(SID);
    expect(again).toMatchObject({ commitsWritten: 0, branchesMoved: [] });
    expect(await tips(mirror)).toEqual(GOLDEN_MIRROR_TIPS);
  });
});
