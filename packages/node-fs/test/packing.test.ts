import {
  countLooseObjects,
  TURN_PACKS_MAX,
  createMirror,
  createMirrorService,
  reconcile,
  MemoryDag,
  messageFileName,
  packSession as packRepository,
  type DagNode,
  type Layout,
} from '@entity-git/core';
import { countPacks, ObjectStore, prefixSuffixDelta, Store } from '@entity-git/git';
import { createNodeMirror, createNodePacker, nativeRepack, nodeStorage } from '@entity-git/node-fs';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from './helpers.js';
import { builtChild } from '@entity-git/test-utils/node-child';

const run = promisify(execFile);
const child = builtChild(join(import.meta.dirname, 'pack-child.ts'));

/** A conversation of `turns` turns (user, assistant, tool result, reply), appended to `dag`. */
async function grow(dag: MemoryDag, sessionId: string, from: number, turns: number): Promise<void> {
  let seq = from * 4;
  let prev: string | null = seq > 0 ? `n${seq}` : null;
  for (let t = 0; t < turns; t++) {
    for (const role of ['user', 'assistant', 'tool', 'assistant'] as const) {
      seq++;
      const caller = role === 'tool' ? `n${seq - 1}` : null;
      const n: DagNode = {
        id: `n${seq}`,
        session_id: sessionId,
        seq,
        role,
        content: `${role} ${seq} ${'x'.repeat(seq % 200)}`,
        predecessor: prev,
        caller,
        created_at: 1779500000 + seq,
        metadata: role === 'tool' ? { tool: 'read' } : null,
      };
      await dag.addNode(n);
      prev = n.id;
    }
  }
}

const tipsOf = (dir: string) => git(dir, 'for-each-ref', '--format=%(refname) %(objectname)').trim();
const looseBytes = (gitdir: string) => {
  let n = 0;
  for (const d of readdirSync(join(gitdir, 'objects'))) {
    if (!/^[0-9a-f]{2}$/.test(d)) continue;
    for (const f of readdirSync(join(gitdir, 'objects', d))) n += statSync(join(gitdir, 'objects', d, f)).size;
  }
  return n;
};

describe('the pack delta', () => {
  it('rebuilds the target exactly (git applies it: see the pack tests), and declines when nothing is shared', () => {
    const base = new TextEncoder().encode(`${'a'.repeat(1000)}tail`);
    const target = new TextEncoder().encode(`${'a'.repeat(1000)}new entriestail`);
    const delta = prefixSuffixDelta(base, target)!;
    // sizes, copy 1000 from 0, insert 11, copy 4 from 1000
    expect([...delta]).toEqual([
      0xec,
      0x07,
      0xf7,
      0x07,
      0x90 | 0x20,
      0xe8,
      0x03,
      11,
      ...new TextEncoder().encode('new entries'),
      0x93,
      0xe8,
      0x03,
      4,
    ]);
    expect(prefixSuffixDelta(new TextEncoder().encode('xyz'), new TextEncoder().encode('abcdefgh'))).toBeNull();
  });
});

describe('reading packs', () => {
  it(`a pack whose index has a large-offset entry (as a pack over 2 GiB has) is read by core's own pack reader, every object whole, as native git reads it`, async () => {
    const dir = tempDir();
    git(dir, 'init', '-q');
    const blob = (text: string) =>
      execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: dir, input: text }).toString().trim();
    const [a, b] = [blob('first blob\n'), blob('second blob\n')];
    const name = spawnSync('git', ['pack-objects', '-q', join(dir, '.git', 'objects', 'pack', 'pack')], {
      cwd: dir,
      input: `${a}\n${b}\n`,
    })
      .stdout.toString()
      .trim();
    execFileSync('git', ['prune-packed'], { cwd: dir });
    // The second entry's offset moved to the 64-bit table, as git writes offsets past 2 GiB.
    const idxPath = join(dir, '.git', 'objects', 'pack', `pack-${name}.idx`);
    const idx = readFileSync(idxPath);
    const n = idx.readUInt32BE(8 + 255 * 4);
    const offsets = 8 + 1024 + n * 24;
    const large = Buffer.alloc(8);
    large.writeBigUInt64BE(BigInt(idx.readUInt32BE(offsets + 4)));
    const body = Buffer.concat([
      idx.subarray(0, offsets + n * 4),
      large,
      idx.subarray(offsets + n * 4, idx.length - 20),
    ]);
    body.writeUInt32BE(0x80000000, offsets + 4);
    writeFileSync(idxPath, Buffer.concat([body, createHash('sha1').update(body).digest()]));
    expect(git(dir, 'cat-file', '-p', a)).toBe('first blob\n');
    const objects = new ObjectStore(new Store(nodeStorage()), join(dir, '.git'));
    for (const [oid, text] of [
      [a, 'first blob\n'],
      [b, 'second blob\n'],
    ] as const) {
      expect(Buffer.from((await objects.read(oid)).content).toString()).toBe(text);
    }
  });
});

describe('packing session repositories', () => {
  for (const engine of ['js', 'native'] as const) {
    for (const layout of ['flat', 'sharded'] as Layout[]) {
      it(`${engine} packer, ${layout}: every object still there for git and for replay, turn packs merged, loose files gone, far smaller`, async () => {
        const dag = new MemoryDag();
        await dag.createSession({ id: 's', title: 'Packed', created_at: 1779500000 });
        // Turn by turn, as a live session is synced: a pack per turn up to TURN_PACKS_MAX, then
        // every object loose (a backfill writes a pack).
        const mirror = createNodeMirror({ dag, root: tempDir(), layout });
        for (let t = 0; t < 60; t++) {
          await grow(dag, 's', t, 1);
          await mirror.sync('s');
        }
        const dir = mirror.repoPath('s');
        const gitdir = join(dir, '.git');
        const tips = tipsOf(dir);
        const turn10 = git(dir, 'rev-list', '--reverse', 'main').trim().split('\n')[9]!;
        const before = await mirror.read('s', turn10);
        const store = new Store(nodeStorage());
        const looseBefore = await countLooseObjects(store, gitdir);
        expect(looseBefore).toBe(Number(/count: (\d+)/.exec(git(dir, 'count-objects', '-v'))![1]));
        // Turns 1–32 each wrote a pack of their 9 or 10 objects (no more packs than that), turns 33–60 loose files.
        expect(await countPacks(store, gitdir)).toBe(TURN_PACKS_MAX);
        expect(looseBefore).toBeGreaterThanOrEqual((60 - TURN_PACKS_MAX) * 7);
        const packDir = join(gitdir, 'objects', 'pack');
        const turnPacks = readdirSync(packDir).filter((n) => n.endsWith('.pack'));
        const loose = looseBytes(gitdir) + turnPacks.reduce((sum, n) => sum + statSync(join(packDir, n)).size, 0);
        const report = engine === 'js' ? await packRepository(store, gitdir) : await nativeRepack()(gitdir);
        expect(report.pack).not.toBeNull();
        if (engine === 'js') expect(report.deltas).toBeGreaterThan(50);
        expect(await countLooseObjects(store, gitdir)).toBe(0);
        // No fan-out directory left empty (git's prune-packed removes them too): only pack/ and info/.
        expect(
          readdirSync(join(gitdir, 'objects'))
            .filter((n) => n !== 'pack' && n !== 'info')
            .sort(),
        ).toEqual([]);
        expect(report.looseRemoved).toBe(looseBefore);
        expect(report.packsRemoved).toBe(TURN_PACKS_MAX);
        expect(readdirSync(packDir).filter((n) => n.endsWith('.pack'))).toEqual([report.pack!.split('/').at(-1)]);
        expect(spawnSync('git', ['verify-pack', report.pack!.replace(/\.pack$/, '.idx')], { cwd: dir }).status).toBe(0);
        expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
        expect(git(dir, 'status', '--porcelain')).toBe('');
        expect(tipsOf(dir)).toBe(tips);
        expect(report.bytes * 3).toBeLessThan(loose);
        // Replay and verify read the packed objects; a fresh mirror too.
        expect(await mirror.read('s', turn10)).toEqual(before);
        expect(await createNodeMirror({ dag, root: join(dir, '..'), layout }).read('s', turn10)).toEqual(before);
        expect(await mirror.verify('s')).toMatchObject({ ok: true });
        // Turns go on, a pack each again; packing again merges only what is new (native git from
        // its maxPacks on: here, with a low one), and leaves the big pack as it is.
        for (let t = 60; t < 65; t++) {
          await grow(dag, 's', t, 1);
          expect(await mirror.sync('s')).toMatchObject({ commitsWritten: 1 });
        }
        expect(await countPacks(store, gitdir)).toBe(6);
        expect(await countLooseObjects(store, gitdir)).toBe(0);
        const again =
          engine === 'js' ? await packRepository(store, gitdir) : await nativeRepack({ maxPacks: 4 })(gitdir);
        expect(again.objects).toBeGreaterThanOrEqual(5 * 7);
        expect(again.objects).toBeLessThan(report.objects / 4);
        expect(again.packsRemoved).toBe(5);
        expect(
          readdirSync(packDir)
            .filter((n) => n.endsWith('.pack'))
            .sort(),
        ).toEqual([report.pack!.split('/').at(-1), again.pack!.split('/').at(-1)].sort());
        expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
        expect(git(dir, 'rev-list', '--count', 'main').trim()).toBe('65');
      });
    }
  }

  for (const engine of ['js', 'native'] as const) {
    it(`${engine}: a process packing as eagerly as it can beside a process that syncs loses nothing`, async () => {
      const dag = new MemoryDag();
      await dag.createSession({ id: 'busy', title: 'Busy', created_at: 1779500000 });
      await grow(dag, 'busy', 0, 5);
      const root = tempDir();
      const mirror = createNodeMirror({ dag, root });
      // Backfilled loose: the packer's first pack (which the turns wait for) has loose objects to
      // take (a short backfill on its own is one pack, and one pack is not due).
      await createNodeMirror({ dag, root, packTurns: false }).sync('busy');
      const dir = mirror.repoPath('busy');
      const stop = join(root, 'stop');
      const ready = join(root, 'ready');
      const packing = run(process.execPath, [child, join(dir, '.git'), stop, engine, ready], {
        cwd: process.cwd(),
      });
      try {
        // The turns start once the packer has packed once, so the two surely overlap.
        while (!existsSync(ready)) await new Promise((r) => setTimeout(r, 20));
        for (let t = 5; t < 45; t++) {
          await grow(dag, 'busy', t, 1);
          expect(await mirror.sync('busy')).toMatchObject({ commitsWritten: 1 });
          // A fresh reader each turn, so nothing is served from a cache.
          const tip = git(dir, 'rev-parse', 'main').trim();
          expect((await createNodeMirror({ dag, root }).read('busy', tip)).messages).toHaveLength(4 * (t + 1));
        }
      } finally {
        writeFileSync(stop, ''); // also when an expectation failed: the packing process ends
      }
      const { packs } = JSON.parse((await packing).stdout) as { packs: number };
      expect(packs).toBeGreaterThan(1);
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(dir, 'rev-list', '--count', 'main').trim()).toBe('45');
      expect(git(dir, 'status', '--porcelain')).toBe('');
      expect(await mirror.verify('busy')).toMatchObject({ ok: true });
    }, 60_000);
  }

  for (const layout of ['flat', 'sharded'] as Layout[]) {
    it(`a backfill (${layout}) writes one pack, whole before any ref moves: the ids of a turn-by-turn sync`, async () => {
      const dag = new MemoryDag();
      await dag.createSession({ id: 'b', title: 'Backfilled', created_at: 1779500000 });
      const stepwise = createNodeMirror({ dag, root: tempDir(), layout });
      for (let t = 0; t < 40; t++) {
        await grow(dag, 'b', t, 1);
        await stepwise.sync('b');
      }
      const mirror = createNodeMirror({ dag, root: tempDir(), layout });
      expect(await mirror.sync('b')).toMatchObject({ commitsWritten: 40, derivation: 'full', noop: false });
      const dir = mirror.repoPath('b');
      const gitdir = join(dir, '.git');
      expect(tipsOf(dir)).toBe(tipsOf(stepwise.repoPath('b')));
      const packsDir = join(gitdir, 'objects', 'pack');
      const idx = readdirSync(packsDir).filter((f) => f.endsWith('.idx'));
      expect(idx).toHaveLength(1);
      expect(spawnSync('git', ['verify-pack', join(packsDir, idx[0]!)], { cwd: dir }).status).toBe(0);
      // No loose object: the meta ref's commit, tree and session.json are in the pack too (issue 22).
      expect(await countLooseObjects(new Store(nodeStorage()), gitdir)).toBe(0);
      const meta = git(
        dir,
        'rev-parse',
        'refs/entity-git/meta',
        'refs/entity-git/meta^{tree}',
        'refs/entity-git/meta:session.json',
      )
        .trim()
        .split('\n');
      const inPack = spawnSync('git', ['show-index'], {
        cwd: dir,
        input: readFileSync(join(packsDir, idx[0]!)),
      }).stdout.toString();
      for (const oid of meta) {
        expect(existsSync(join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2)))).toBe(false);
        expect(inPack).toContain(oid);
      }
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(dir, 'status', '--porcelain')).toBe('');
      expect(Number(/in-pack: (\d+)/.exec(git(dir, 'count-objects', '-v'))![1])).toBeGreaterThan(40 * 4);
      // And it goes on turn by turn, loose again.
      await grow(dag, 'b', 40, 1);
      expect(await mirror.sync('b')).toMatchObject({ commitsWritten: 1, derivation: 'extended' });
      expect(tipsOf(dir)).not.toBe(tipsOf(stepwise.repoPath('b')));
      await stepwise.sync('b');
      expect(tipsOf(dir)).toBe(tipsOf(stepwise.repoPath('b')));
      expect(await mirror.verify('b')).toMatchObject({ ok: true });
    });
  }

  it('runs behind the service: asked after commits, never awaited by a turn, done by drain()', async () => {
    const dag = new MemoryDag();
    await dag.createSession({ id: 'svc', title: 'Service', created_at: 1779500000 });
    // Loose turns: the packer has loose objects to pack (a Node mirror's turns are small packs).
    const mirror = createNodeMirror({ dag, root: tempDir(), packTurns: false });
    const packed: string[] = [];
    const packer = createNodePacker({ looseObjects: 40, delayMs: 50, onPacked: (gitdir) => packed.push(gitdir) });
    const service = createMirrorService({ mirror, packer });
    for (let t = 0; t < 12; t++) {
      await grow(dag, 'svc', t, 1);
      service.notify('svc');
    }
    await service.drain();
    const dir = mirror.repoPath('svc');
    expect(packed).toEqual([join(dir, '.git')]);
    expect(await countLooseObjects(new Store(nodeStorage()), join(dir, '.git'))).toBe(0);
    expect(git(dir, 'rev-list', '--count', 'main').trim()).toBe('12');
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    await service.close();
  });
});

describe('reading packs', () => {
  it('a damaged pack: verify names what is gone, a full sync writes it loose again with the same ids', async () => {
    const dag = new MemoryDag();
    await dag.createSession({ id: 'd', title: 'Damaged', created_at: 1779500000 });
    await grow(dag, 'd', 0, 40);
    const root = tempDir();
    const mirror = createNodeMirror({ dag, root });
    await mirror.sync('d'); // a backfill: one pack
    const dir = mirror.repoPath('d');
    const tips = tipsOf(dir);
    const pack = readdirSync(join(dir, '.git', 'objects', 'pack')).find((f) => f.endsWith('.pack'))!;
    const path = join(dir, '.git', 'objects', 'pack', pack);
    const bytes = readFileSync(path);
    // Flip bytes in the middle of the pack: some objects no longer inflate or match their ids.
    for (let i = bytes.length >> 2; i < (bytes.length >> 2) + 4096; i++) bytes[i] = bytes[i]! ^ 0x5a;
    writeFileSync(path, bytes);
    const fresh = createNodeMirror({ dag, root });
    const report = await fresh.verify('d');
    expect(report.ok).toBe(false);
    expect(
      report.differences.some(
        (d) => d.kind === 'missing-object' || d.kind === 'corrupt' || d.kind === 'branch-differs',
      ),
    ).toBe(true);
    // full: the pack is damaged below intact refs, which only the full check reads.
    const repaired = await reconcile({ dag, mirror: createNodeMirror({ dag, root }), full: true });
    expect(repaired.entries[0]).toMatchObject({ sessionId: 'd', action: 'repaired' });
    expect(tipsOf(dir)).toBe(tips);
    expect(await createNodeMirror({ dag, root }).verify('d')).toMatchObject({ ok: true });
  });
});

describe("reading packs with the portable codec (the browser's)", () => {
  it('inflates each entry from its own bytes: every turn reads back, verify is clean, ids as with node:zlib', async () => {
    const dag = new MemoryDag();
    await dag.createSession({ id: 'p', title: 'Portable', created_at: 1779500000 });
    await grow(dag, 'p', 0, 40);
    const root = tempDir();
    const mirror = createNodeMirror({ dag, root });
    await mirror.sync('p'); // a backfill: one pack, trees as deltas
    const dir = mirror.repoPath('p');
    expect(readdirSync(join(dir, '.git', 'objects', 'pack')).filter((f) => f.endsWith('.pack'))).toHaveLength(1);
    // The same repository through pako, which reads on into a following zlib stream when given one.
    const portable = createMirror({ dag, root, storage: { ...nodeStorage(), codec: undefined } });
    expect(await portable.verify('p')).toMatchObject({ ok: true, differences: [] });
    const log = await portable.log('p');
    expect(log.map((c) => c.sha)).toEqual(git(dir, 'rev-list', 'main').trim().split('\n'));
    for (const c of [log.at(-1)!, log[20]!, log[0]!]) {
      const view = await portable.read('p', c.sha);
      const native = git(dir, 'ls-tree', '--name-only', `${c.sha}:messages`).trim().split('\n');
      expect(view.messages.map((m) => messageFileName(m))).toEqual(native);
      expect(view.turn).toBe(c.turn);
    }
  });
});
