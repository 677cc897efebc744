import { createNodeMirror } from '@entity-git/node-fs';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, growingSession, tempDir } from './helpers.js';

/** `git verify-pack -v` of the repository's one pack: each object's type, size, depth; and git's chain histogram. */
function packObjects(dir: string) {
  const packDir = join(dir, '.git', 'objects', 'pack');
  const idx = readdirSync(packDir).filter((n) => n.endsWith('.idx'));
  expect(idx).toHaveLength(1);
  const out = git(dir, 'verify-pack', '-v', join(packDir, idx[0]!));
  const objects = out
    .split('\n')
    .map((l) => l.split(/\s+/))
    .filter((f) => /^[0-9a-f]{40}$/.test(f[0]!) && f.length >= 5)
    .map((f) => ({ type: f[1]!, size: Number(f[2]), depth: f.length >= 7 ? Number(f[5]) : 0 }));
  const longest = Math.max(...[...out.matchAll(/chain length = (\d+)/g)].map((m) => Number(m[1])));
  return { objects, longest };
}

describe('tree delta chains in a pack', () => {
  it('a long flat backfill: a tree ending a chain of 50 deltas restarts from the tree that chain began with, not stored whole; no chain past 50', async () => {
    // 400 turns of 4 messages: the flat messages/ tree grows by 4 entries a turn, to 1,600.
    const c = growingSession('Chains');
    await c.turns(400);
    const mirror = createNodeMirror({ dag: c.dag, root: tempDir() });
    expect(await mirror.sync('s')).toMatchObject({ commitsWritten: 400 });
    const dir = mirror.repoPath('s');
    const { objects, longest } = packObjects(dir);
    const trees = objects.filter((o) => o.type === 'tree');
    // 400 root trees and 400 messages/ trees, and the meta ref's.
    expect(trees.length).toBe(801);
    expect(longest).toBeLessThanOrEqual(50);
    // Stored whole, a messages/ tree ending a chain would be one every 51 turns (7 of them over
    // 8 KB here); restarted, a tree is whole only where the restart's delta would be more than
    // half of it (the chain's first tree still small): once, at the 52nd turn (208 entries).
    const wholeLarge = trees.filter((o) => o.depth === 0 && o.size > 8 << 10);
    expect(wholeLarge).toHaveLength(1);
    expect(wholeLarge[0]!.size).toBeLessThan(10 << 10);
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    // Every turn reads back through entity-git's own reader (deltas of deltas composed).
    const commits = git(dir, 'rev-list', '--reverse', 'main').trim().split('\n');
    for (const k of [1, 50, 51, 52, 101, 102, 200, 399, 400]) {
      const view = await mirror.read('s', commits[k - 1]!);
      expect(view.turn).toBe(k);
      expect(view.messages.map((m) => m.seq)).toEqual(Array.from({ length: 4 * k }, (_, i) => i + 1));
    }
    expect(await mirror.verify('s')).toMatchObject({ ok: true });
  });
});
