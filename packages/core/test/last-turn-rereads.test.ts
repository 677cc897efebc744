import { memoryStorage } from '@entity-git/git';
import { describe, expect, it } from 'vitest';
import { GOLDEN_SESSION, goldenNodes, writeGolden } from '../../test-utils/src/golden-dag.js';
import { GOLDEN_MIRROR_TIPS } from '../../test-utils/src/mirror-suite.js';
import { createMirror, MemoryDag, type DagNode, type DagSource, type Mirror } from '../src/index.js';

const SID = GOLDEN_SESSION.id;

/**
 * The golden DAG as an application's store would give it: a node may be written again in place
 * (`rewrites`), and the source says whether its last turn may change so. Records the seq each
 * read starts after.
 */
class RewritingDag implements DagSource {
  readonly afterSeqs: number[] = [];
  readonly rewrites = new Map<string, Partial<DagNode>>();
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
    for await (const node of this.#dag.nodesAfter(id, after, options)) yield { ...node, ...this.rewrites.get(node.id) };
  }
}

/** The golden DAG, its placeholder `a6` written out first unless `pending`, and its mirror. */
async function golden(lastTurnMayChange: boolean, pending = false) {
  const memory = new MemoryDag();
  await writeGolden(memory);
  const dag = new RewritingDag(memory, lastTurnMayChange);
  if (!pending) dag.rewrites.set('a6', { content: 'Fixed all three.', metadata: null });
  return { memory, dag, mirror: createMirror({ dag, storage: memoryStorage(), root: '/sessions' }) };
}

/** The newest reply (`a7`, on fork-u4) as the application writes it again. */
const A7_AGAIN = { content: 'It is a tiny TypeScript repository, with tests.' };

const tips = async (mirror: Mirror) => Object.fromEntries((await mirror.branches(SID)).map((b) => [b.name, b.commit]));

/** The tips a fresh mirror of `dag` as it is now gives. */
async function fresh(dag: DagSource): Promise<Record<string, string>> {
  const mirror = createMirror({ dag, storage: memoryStorage(), root: '/sessions' });
  await mirror.sync(SID);
  return tips(mirror);
}

describe('a source whose last turn may change (DagSource.lastTurnMayChange)', () => {
  it('each sync reads again from the first node of the newest turn (u4, seq 18), not from older branches', async () => {
    const { dag, mirror } = await golden(true);
    await mirror.sync(SID);
    dag.afterSeqs.length = 0;
    const again = await mirror.sync(SID);
    expect(dag.afterSeqs).toEqual([17]);
    expect(again).toMatchObject({ commitsWritten: 0, branchesMoved: [] });
  });

  it('a placeholder still pending is read again from its turn (u3, seq 16), as without the flag', async () => {
    const { dag, mirror } = await golden(true, true);
    await mirror.sync(SID);
    expect(await tips(mirror)).toEqual(GOLDEN_MIRROR_TIPS);
    dag.afterSeqs.length = 0;
    await mirror.sync(SID);
    expect(dag.afterSeqs).toEqual([15]);
  });

  it("the newest turn's reply written again moves its branch to a fresh mirror's commit", async () => {
    const { dag, mirror } = await golden(true);
    await mirror.sync(SID);
    const before = await tips(mirror);
    dag.rewrites.set('a7', A7_AGAIN);
    const again = await mirror.sync(SID);
    expect(again).toMatchObject({ commitsWritten: 1, branchesMoved: ['fork-u4'] });
    const expected = await fresh(dag);
    expect(expected['fork-u4']).not.toBe(before['fork-u4']);
    expect(await tips(mirror)).toEqual(expected);
  });

  it('a new prompt after it: the turn before is read again too, and its rewrite is mirrored', async () => {
    const { memory, dag, mirror } = await golden(true);
    const a7 = goldenNodes().find((n) => n.id === 'a7')!;
    await memory.addNode({ ...a7, id: 'u5', seq: 20, role: 'user', predecessor: 'a7', content: 'And the tests?' });
    await mirror.sync(SID);
    dag.afterSeqs.length = 0;
    dag.rewrites.set('a7', A7_AGAIN);
    await mirror.sync(SID);
    expect(dag.afterSeqs).toEqual([17]);
    expect(await tips(mirror)).toEqual(await fresh(dag));
  });

  it("an older branch's last turn written again waits for a full sync, which mirrors it", async () => {
    const { dag, mirror } = await golden(true);
    await mirror.sync(SID);
    const before = await tips(mirror);
    dag.rewrites.set('a5', { content: 'No FIXME anywhere.' });
    expect(await mirror.sync(SID)).toMatchObject({ commitsWritten: 0, branchesMoved: [] });
    expect(await tips(mirror)).toEqual(before);
    expect(await mirror.sync(SID, { full: true })).toMatchObject({ branchesMoved: ['fork-u2e'] });
    expect(await tips(mirror)).toEqual(await fresh(dag));
  });

  it('without it, a node a commit holds is not read again (the rewrite stays unmirrored)', async () => {
    const { dag, mirror } = await golden(false);
    await mirror.sync(SID);
    const before = await tips(mirror);
    dag.rewrites.set('a7', A7_AGAIN);
    const again = await mirror.sync(SID);
    expect(again).toMatchObject({ commitsWritten: 0, branchesMoved: [] });
    expect(await tips(mirror)).toEqual(before);
  });
});
