import { memoryStorage, type Storage } from '@entity-git/git';
import { describe, expect, it } from 'vitest';
import { GOLDEN_SESSION, writeGolden } from '../../test-utils/src/golden-dag.js';
import { GOLDEN_MIRROR_TIPS, GOLDEN_MIRROR_TURN1 } from '../../test-utils/src/mirror-suite.js';
import { createMirror, DEFAULT_IDENTITY, MemoryDag, reconcile, type DagSource, type Mirror } from '../src/index.js';
import { openRepo, repositoryContext } from '../src/repository.js';

const SID = GOLDEN_SESSION.id;

/** A DagSource that counts its reads of a session's nodes (each `nodesAfter` call is one read). */
class CountingDag implements DagSource {
  reads = 0;
  readonly #dag: DagSource;
  constructor(dag: DagSource) {
    this.#dag = dag;
  }
  listSessions() {
    return this.#dag.listSessions();
  }
  getSession(id: string) {
    return this.#dag.getSession(id);
  }
  nodesAfter(id: string, after?: number, options?: { batchSize?: number }) {
    this.reads++;
    return this.#dag.nodesAfter(id, after, options);
  }
}

async function golden(): Promise<{ dag: MemoryDag; counted: CountingDag; storage: Storage; mirror: Mirror }> {
  const dag = new MemoryDag();
  await writeGolden(dag);
  const counted = new CountingDag(dag);
  const storage = memoryStorage();
  return { dag, counted, storage, mirror: createMirror({ dag: counted, storage, root: '/sessions' }) };
}

const tips = async (mirror: Mirror) => Object.fromEntries((await mirror.branches(SID)).map((b) => [b.name, b.commit]));

/** Move `main` behind the mirror's back, as another program would. */
async function moveMain(storage: Storage, to: string): Promise<void> {
  const repo = openRepo(repositoryContext({ storage, root: '/sessions' }), SID);
  await repo.refs.update('refs/heads/main', to, { reflog: { who: DEFAULT_IDENTITY, message: 'moved by hand' } });
}

describe('the walk of a new session through reconcile', () => {
  it('backfills it reading its nodes once, with the golden ids', async () => {
    const { counted, mirror } = await golden();
    const report = await reconcile({ dag: counted, mirror, sessions: [SID] });
    expect(report.entries.map((e) => e.action)).toEqual(['backfilled']);
    expect(counted.reads).toBe(1);
    expect(await tips(mirror)).toEqual(GOLDEN_MIRROR_TIPS);
  });

  it('checks a sync without reading the DAG again; verify alone reads it once and checks in full', async () => {
    const { counted, mirror } = await golden();
    const synced = await mirror.sync(SID);
    expect(counted.reads).toBe(1);
    expect(await mirror.verify(SID, { synced })).toEqual({ sessionId: SID, ok: true, differences: [] });
    expect(counted.reads).toBe(1);
    expect(await mirror.verify(SID)).toEqual({ sessionId: SID, ok: true, differences: [] });
    expect(counted.reads).toBe(2);
  });

  it('finds a repository changed behind the sync it checks, and says the DAG did not change', async () => {
    const { counted, storage, mirror } = await golden();
    const synced = await mirror.sync(SID);
    await moveMain(storage, GOLDEN_MIRROR_TURN1);
    const after = await mirror.verify(SID, { synced });
    expect(after.ok).toBe(false);
    expect(after.dagChanged).toBeUndefined();
    expect(after.differences).toContainEqual(expect.objectContaining({ kind: 'branch-differs', branch: 'main' }));
    // The same damage, found by verify on its own.
    expect((await mirror.verify(SID)).differences).toEqual(after.differences);
    expect(counted.reads).toBe(3);
  });

  it('says when the DAG was written to between the sync and its check', async () => {
    const { dag, storage, mirror } = await golden();
    const synced = await mirror.sync(SID);
    await dag.appendNode({ id: 'late-u', session_id: SID, role: 'user', content: 'one more', predecessor: 'a7' });
    await moveMain(storage, GOLDEN_MIRROR_TURN1);
    const after = await mirror.verify(SID, { synced });
    expect(after).toMatchObject({ ok: false, dagChanged: true });
  });

  it('ignores a result of another mirror: the full check', async () => {
    const { counted, mirror } = await golden();
    const other = createMirror({ dag: counted, storage: memoryStorage(), root: '/other' });
    const synced = await other.sync(SID);
    await mirror.sync(SID);
    expect(counted.reads).toBe(2);
    expect((await mirror.verify(SID, { synced })).ok).toBe(true);
    expect(counted.reads).toBe(3);
  });
});
