import { createMirror, packSession as packRepository, type Layout } from '@entity-git/core';
import { COMMIT_GRAPH_PATH, CommitGraph, Store, type Storage } from '@entity-git/git';
import { createNodeMirror, nativeRepack, nodeStorage } from '@entity-git/node-fs';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, growingSession, tempDir } from './helpers.js';

/** node storage whose codec counts inflates: every object read from disk is one. */
function counting(): { storage: Storage; inflates: () => number } {
  const base = nodeStorage();
  let n = 0;
  const codec = { ...base.codec!, inflate: (d: Uint8Array) => (n++, base.codec!.inflate(d)) };
  return { storage: { ...base, codec }, inflates: () => n };
}

const graphOf = (dir: string) =>
  CommitGraph.parse(readFileSync(join(dir, '.git', COMMIT_GRAPH_PATH)), nodeStorage().codec!);
/** Commit of turn k on main (1 = the first). */
const turnCommit = (dir: string, k: number, of: number) => git(dir, 'rev-parse', `main~${of - k}`).trim();

describe('the commit-graph of a session repository', () => {
  for (const layout of ['flat', 'sharded'] as Layout[]) {
    it(`${layout}: a backfill writes one native git verifies; a cold read of an early turn takes the chain from it, not from every commit`, async () => {
      const c = growingSession('Graph');
      await c.turns(60);
      const root = tempDir();
      await createNodeMirror({ dag: c.dag, root, layout }).sync('s');
      const dir = join(root, 's');
      expect(git(dir, 'commit-graph', 'verify')).toBe('');
      expect(git(dir, 'fsck', '--strict')).toBe('');
      const graph = graphOf(dir)!;
      // 60 turns and the meta ref's commit, in the backfill's pack with them (issue 22).
      expect(graph.count).toBe(61);
      for (const k of [1, 2, 30, 60]) expect(graph.generation(graph.positionOf(turnCommit(dir, k, 60)))).toBe(k);

      // Live turns after the backfill stay loose: the walk reads them, then the graph.
      const live = createNodeMirror({ dag: c.dag, root, layout });
      for (let t = 0; t < 5; t++) {
        await c.turns(1);
        await live.sync('s');
      }
      const early = turnCommit(dir, 2, 65);
      const withGraph = counting();
      const view = await createMirror({ dag: c.dag, root, layout, storage: withGraph.storage }).read('s', early);
      expect(view).toMatchObject({ turn: 2, turns: 65, prev: turnCommit(dir, 1, 65), next: turnCommit(dir, 3, 65) });
      expect(view.messages.map((m) => m.id)).toEqual(['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8']);
      // Without the graph, the same view, from every commit down the chain.
      rmSync(join(dir, '.git', COMMIT_GRAPH_PATH));
      const without = counting();
      expect(await createMirror({ dag: c.dag, root, layout, storage: without.storage }).read('s', early)).toEqual(view);
      expect(withGraph.inflates()).toBeLessThan(25);
      expect(without.inflates()).toBeGreaterThanOrEqual(63);
    });
  }

  it('a graph whose generations do not count the turns (a merge made with git) is walked commit by commit instead', async () => {
    const c = growingSession('Graph');
    await c.turns(40);
    const root = tempDir();
    await createNodeMirror({ dag: c.dag, root }).sync('s');
    const dir = join(root, 's');
    const t = (k: number) => turnCommit(dir, k, 40);
    // Branch x: a merge whose first parent is turn 3 and second the tip, so its generation is 41.
    const tree = git(dir, 'rev-parse', `${t(3)}^{tree}`).trim();
    const merge = git(
      dir,
      '-c',
      'user.name=Hand',
      '-c',
      'user.email=hand@localhost',
      'commit-tree',
      tree,
      '-p',
      t(3),
      '-p',
      t(40),
      '-m',
      'merged by hand',
    ).trim();
    git(dir, 'update-ref', 'refs/heads/x', merge);
    git(dir, 'commit-graph', 'write', '--reachable', '--no-progress');
    const graph = graphOf(dir)!;
    expect(graph.generation(graph.positionOf(merge))).toBe(41);
    const onX = await createNodeMirror({ dag: c.dag, root }).read('s', t(3), { branch: 'x' });
    // Turn 3 of a four-commit chain: from the trailers and the walk, not generation 3 of 41.
    expect(onX).toMatchObject({ branch: 'x', turn: 3, turns: 4, prev: t(2), next: merge });
    rmSync(join(dir, '.git', COMMIT_GRAPH_PATH));
    expect(await createNodeMirror({ dag: c.dag, root }).read('s', t(3), { branch: 'x' })).toEqual(onX);
    // On main, the same commit is turn 3 of 40 with or without the graph.
    git(dir, 'commit-graph', 'write', '--reachable', '--no-progress');
    expect(await createNodeMirror({ dag: c.dag, root }).read('s', t(3), { branch: 'main' })).toMatchObject({
      turn: 3,
      turns: 40,
      prev: t(2),
      next: t(4),
    });
  });

  it('both packers bring the graph up to every commit; the mirror reads the one native git writes; a damaged graph is not used', async () => {
    for (const engine of ['js', 'native'] as const) {
      const c = growingSession('Graph');
      await c.turns(40);
      const root = tempDir();
      const mirror = createNodeMirror({ dag: c.dag, root });
      await mirror.sync('s');
      for (let t = 0; t < 6; t++) {
        await c.turns(1);
        await mirror.sync('s');
      }
      const dir = join(root, 's');
      expect(graphOf(dir)!.count).toBe(41); // 40 turns and the meta ref's commit
      if (engine === 'js') await packRepository(new Store(nodeStorage()), join(dir, '.git'));
      else await nativeRepack()(join(dir, '.git'));
      expect(git(dir, 'commit-graph', 'verify')).toBe('');
      const graph = graphOf(dir)!;
      expect(graph.count).toBe(47); // 46 turns and the meta ref's commit
      for (const k of [1, 41, 46]) expect(graph.generation(graph.positionOf(turnCommit(dir, k, 46)))).toBe(k);
      const view = await createNodeMirror({ dag: c.dag, root }).read('s', turnCommit(dir, 41, 46));
      expect(view).toMatchObject({ turn: 41, turns: 46, prev: turnCommit(dir, 40, 46), next: turnCommit(dir, 42, 46) });

      // A graph with a flipped byte fails its checksum: not read, and the view is the same.
      const path = join(dir, '.git', COMMIT_GRAPH_PATH);
      const bytes = readFileSync(path);
      bytes[bytes.length - 100]! ^= 0xff;
      writeFileSync(path, bytes);
      expect(CommitGraph.parse(bytes, nodeStorage().codec!)).toBeNull();
      expect(await createNodeMirror({ dag: c.dag, root }).read('s', turnCommit(dir, 41, 46))).toEqual(view);
      expect(existsSync(path)).toBe(true);
    }
  });
});
