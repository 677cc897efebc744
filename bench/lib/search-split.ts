// Where the index update after a turn's sync goes: reading what the sync wrote from the repository
// (`readRepositoryChanges` over a store of its own, as `afterSync` does) against writing it into
// the index (`apply`: one transaction), each timed, on syncs of a running mirror.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { readRepositoryChanges, sessionDirName } from '../../packages/core/src/index.js';
import { storeFor } from '../../packages/git/src/index.js';
import { createNodeMirror, nodeStorage } from '../../packages/node-fs/src/index.js';
import type { SearchIndex } from '../../packages/search/src/index.js';
import { openSqlite } from '../../packages/sqlite/src/index.js';
import { stats } from './measure.js';
import { corpusNodes, corpusSessionId } from './search-corpus.js';

/** Two turns appended to each of `sessions` sessions (of a single branch, `main`); the second's update split in two. */
export async function measureUpdateSplit(db: string, root: string, index: SearchIndex, sessions: number[]) {
  const dag = await openSqlite({ file: db });
  const mirror = createNodeMirror({ dag: dag.dag, root });
  const store = storeFor(nodeStorage());
  const sync: number[] = [];
  const read: number[] = [];
  const write: number[] = [];
  for (const i of sessions) {
    const id = corpusSessionId(i);
    const dir = join(root, sessionDirName(id));
    let tip = '';
    for (let turn = 0; turn < 2; turn++) {
      let last = 0;
      for await (const n of dag.dag.nodesAfter(id, 0)) last = n.seq;
      for (const { seq: _seq, ...n } of corpusNodes(i, 1, last)) await dag.writer.appendNode(n);
      const t0 = performance.now();
      const r = await mirror.sync(id);
      const t1 = performance.now();
      if (turn === 0) {
        await index.afterSync(r);
        tip = (await readRepositoryChanges(store, dir, new Map(), { session: id }))!.tips.get('main')!;
        continue;
      }
      const changes = await readRepositoryChanges(store, dir, new Map([['main', tip]]), {
        session: id,
        moved: { branches: r.branchesMoved, head: r.head },
      });
      const t2 = performance.now();
      index.apply(dir, changes!);
      const t3 = performance.now();
      sync.push(t1 - t0);
      read.push(t2 - t1);
      write.push(t3 - t2);
    }
  }
  await dag.close();
  return { sync: stats(sync), read: stats(read), write: stats(write) };
}
