import {
  countLooseObjects,
  createMirror,
  createPacker,
  packSession as packRepository,
  TURN_PACKS_MAX,
  type DagNode,
  type Layout,
} from '@entity-git/core';
import { countPacks, Store } from '@entity-git/git';
import { createNodeMirror, nodeStorage } from '@entity-git/node-fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, growingSession, noise, tempDir } from './helpers.js';

const store = new Store(nodeStorage());
const packsIn = (gitdir: string) =>
  readdirSync(join(gitdir, 'objects', 'pack'))
    .filter((n) => n.endsWith('.pack'))
    .sort();
const looseOf = (dir: string) => Number(/count: (\d+)/.exec(git(dir, 'count-objects', '-v'))![1]);
/** A session of `turns` turns synced by createNodeMirror, and where its repository is. */
async function mirrored(title: string, turns: number) {
  const c = growingSession(title);
  await c.turns(turns);
  const root = tempDir();
  const mirror = createNodeMirror({ dag: c.dag, root });
  // Backfilled loose, so the packs counted below are the turns' (a short backfill is a pack too);
  // then a sync with nothing new, so the mirror's next turns continue its plan (a pack each).
  await createNodeMirror({ dag: c.dag, root, packTurns: false }).sync('s');
  await mirror.sync('s');
  const dir = mirror.repoPath('s');
  return { c, root, mirror, dir, gitdir: join(dir, '.git') };
}
/** A blob of `content` put in a pack of its own by git (its loose copy pruned); returns the blob id and the pack's name. */
function packBlob(dir: string, content: string): { blob: string; pack: string } {
  const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: dir, input: content }).toString().trim();
  const pack = spawnSync('git', ['pack-objects', '-q', join(dir, '.git', 'objects', 'pack', 'pack')], {
    cwd: dir,
    input: `${blob}\n`,
  })
    .stdout.toString()
    .trim();
  execFileSync('git', ['prune-packed'], { cwd: dir });
  return { blob, pack };
}

describe('a pack per turn (createNodeMirror)', () => {
  for (const layout of ['flat', 'sharded'] as Layout[]) {
    it(`${layout}: each live turn adds one pack git verifies and no loose object; the commits are those of loose turns`, async () => {
      const c = growingSession('Turn packs');
      await c.turns(3);
      const root = tempDir();
      const looseRoot = tempDir();
      const mirror = createNodeMirror({ dag: c.dag, root, layout });
      const loose = createNodeMirror({ dag: c.dag, root: looseRoot, layout, packTurns: false });
      // Backfilled loose, so the packs counted below are the turns' (a short backfill is a pack too);
      // then a sync with nothing new, so the mirror's next turns continue its plan (a pack each).
      await createNodeMirror({ dag: c.dag, root, layout, packTurns: false }).sync('s');
      await mirror.sync('s');
      await loose.sync('s');
      const dir = mirror.repoPath('s');
      const gitdir = join(dir, '.git');
      const looseAtStart = looseOf(dir);
      for (let t = 1; t <= 4; t++) {
        await c.turns(1);
        expect(await mirror.sync('s')).toMatchObject({ commitsWritten: 1 });
        await loose.sync('s');
        const packs = packsIn(gitdir);
        expect(packs).toHaveLength(t);
        expect(looseOf(dir)).toBe(looseAtStart);
        const newest = git(dir, 'rev-parse', 'HEAD').trim();
        // The turn's pack holds its commit, trees and message blobs, each whole (no delta).
        const verify = execFileSync(
          'git',
          ['verify-pack', '-v', ...packs.map((p) => join(gitdir, 'objects', 'pack', p.replace(/\.pack$/, '.idx')))],
          { encoding: 'utf8' },
        );
        expect(verify).toContain(`${newest} commit`);
        expect(verify).toMatch(/non delta: \d+ objects/);
        expect(verify).not.toMatch(/chain length/);
      }
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(dir, 'status', '--porcelain')).toBe('');
      expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(git(loose.repoPath('s'), 'rev-parse', 'HEAD').trim());
      expect(packsIn(join(loose.repoPath('s'), '.git'))).toEqual([]);
      // Read back through a fresh mirror: every turn, from the packs.
      const log = await createNodeMirror({ dag: c.dag, root }).log('s');
      expect(log).toHaveLength(7);
      expect((await createNodeMirror({ dag: c.dag, root }).read('s', log[1]!.sha)).messages).toHaveLength(24);
      expect(await mirror.verify('s')).toMatchObject({ ok: true });
    });
  }

  it(`past ${TURN_PACKS_MAX} packs a turn goes loose; an object of 64 KB or more (a large output) is loose, the rest of its turn packed`, async () => {
    const { c, mirror, dir, gitdir } = await mirrored('Many packs', 1);
    // Packs a repository already has count: TURN_PACKS_MAX - 1 of them, made by git.
    for (let i = 0; i < TURN_PACKS_MAX - 1; i++) {
      packBlob(dir, `pad ${i}`);
    }
    expect(await countPacks(store, gitdir)).toBe(TURN_PACKS_MAX - 1);
    const loose0 = looseOf(dir);
    await c.turns(1);
    await mirror.sync('s');
    expect(await countPacks(store, gitdir)).toBe(TURN_PACKS_MAX);
    expect(looseOf(dir)).toBe(loose0);
    await c.turns(1);
    await mirror.sync('s');
    expect(await countPacks(store, gitdir)).toBe(TURN_PACKS_MAX);
    // 4 blobs, messages tree, root tree, commit: loose.
    expect(looseOf(dir)).toBe(loose0 + 7);

    const big = growingSession('Big output');
    await big.turns(1);
    const root2 = tempDir();
    const m2 = createNodeMirror({ dag: big.dag, root: root2 });
    await createNodeMirror({ dag: big.dag, root: root2, packTurns: false }).sync('s');
    await m2.sync('s');
    const dir2 = m2.repoPath('s');
    const before = looseOf(dir2);
    const output = noise(5 << 20);
    const nodes: DagNode[] = [
      {
        id: 'b1',
        session_id: 's',
        seq: 5,
        role: 'user',
        content: 'read the log',
        predecessor: 'n4',
        caller: null,
        created_at: 1779500100,
        metadata: null,
      },
      {
        id: 'b2',
        session_id: 's',
        seq: 6,
        role: 'assistant',
        content: 'reading',
        predecessor: 'b1',
        caller: null,
        created_at: 1779500101,
        metadata: null,
      },
      {
        id: 'b3',
        session_id: 's',
        seq: 7,
        role: 'tool',
        content: output,
        predecessor: 'b2',
        caller: 'b2',
        created_at: 1779500102,
        metadata: { tool: 'read' },
      },
      {
        id: 'b4',
        session_id: 's',
        seq: 8,
        role: 'assistant',
        content: 'done',
        predecessor: 'b3',
        caller: null,
        created_at: 1779500103,
        metadata: null,
      },
    ];
    for (const n of nodes) await big.dag.addNode(n);
    await m2.sync('s');
    expect(looseOf(dir2)).toBe(before + 1);
    const name = git(dir2, 'ls-tree', '--name-only', 'HEAD', 'messages/')
      .split('\n')
      .find((l) => l.includes('-t-b3'))!;
    const blob = git(dir2, 'rev-parse', `HEAD:${name}`).trim();
    expect(Number(git(dir2, 'cat-file', '-s', blob))).toBeGreaterThan(5 << 20);
    expect(readdirSync(join(dir2, '.git', 'objects', blob.slice(0, 2)))).toContain(blob.slice(2));
    expect(packsIn(join(dir2, '.git'))).toHaveLength(1);
    expect(git(dir2, 'fsck', '--strict', '--no-dangling')).toBe('');
  });

  it('a flat messages/ tree of 64 KB or more is written loose, the rest of its turn packed', async () => {
    const { c, mirror, dir } = await mirrored('Big tree', 400);
    const [loose0, packs0] = [looseOf(dir), packsIn(join(dir, '.git')).length];
    await c.turns(1);
    await mirror.sync('s');
    const tree = git(dir, 'rev-parse', 'HEAD:messages').trim();
    expect(Number(git(dir, 'cat-file', '-s', tree))).toBeGreaterThanOrEqual(64 << 10);
    expect(looseOf(dir)).toBe(loose0 + 1);
    expect(readdirSync(join(dir, '.git', 'objects', tree.slice(0, 2)))).toContain(tree.slice(2));
    expect(packsIn(join(dir, '.git'))).toHaveLength(packs0 + 1);
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
  });

  it('core createMirror writes loose objects unless packTurns is set', async () => {
    const c = growingSession('Loose');
    await c.turns(1);
    const root = tempDir();
    const mirror = createMirror({ dag: c.dag, root, storage: nodeStorage() });
    await mirror.sync('s');
    await c.turns(1);
    await mirror.sync('s');
    expect(packsIn(join(mirror.repoPath('s'), '.git'))).toEqual([]);
  });
});

describe('merging turn packs', () => {
  it('the packer is due at its pack count; the js packer keeps a pack with .keep, and writes loose what no ref reaches before a merged pack goes', async () => {
    const { c, mirror, dir, gitdir } = await mirrored('Merge', 1);
    for (let t = 0; t < 3; t++) {
      await c.turns(1);
      await mirror.sync('s');
    }
    // A pack no ref reaches: what a sync leaves between writing its pack and moving its ref.
    const orphan = packBlob(dir, 'orphan').blob;
    // And one kept by a .keep file.
    const { blob: kept, pack: keptPack } = packBlob(dir, 'kept');
    writeFileSync(join(gitdir, 'objects', 'pack', `pack-${keptPack}.keep`), '');
    expect(await countPacks(store, gitdir)).toBe(5);

    const packer = createPacker({ storage: nodeStorage(), packs: 6, looseObjects: 1_000 });
    expect(await packer.packNow(gitdir)).toBeNull();
    const report = await createPacker({ storage: nodeStorage(), packs: 5, looseObjects: 1_000 }).packNow(gitdir);
    expect(report).toMatchObject({ packsRemoved: 4 });
    expect(packsIn(gitdir).sort()).toEqual([report!.pack!.split('/').at(-1), `pack-${keptPack}.pack`].sort());
    // The orphan is loose now, not lost; the kept object still in its pack.
    expect(readdirSync(join(gitdir, 'objects', orphan.slice(0, 2)))).toContain(orphan.slice(2));
    expect(git(dir, 'cat-file', '-t', kept).trim()).toBe('blob');
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'rev-list', '--count', 'HEAD').trim()).toBe('4');
    expect(await countLooseObjects(store, gitdir)).toBe(1);
    // One pack besides the kept one: nothing left to merge.
    expect((await packRepository(store, gitdir)).pack).toBeNull();
  });
});
