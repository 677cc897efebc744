import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createMirror, MemoryDag, type DagNode, type DagSource, reconcile } from '@entity-git/core';
import type { Codec } from '@entity-git/git';
import { afterAll, describe, expect, it } from 'vitest';
import { createNodeMirror, nodeCodec, nodeStorage } from '../src/index.js';
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

async function longDag(turns = TURNS, repeat = 40): Promise<MemoryDag> {
  const dag = new MemoryDag();
  await dag.createSession({ id: SID, title: 'long', created_at: 1_700_000_000 });
  let last: string | null = null;
  for (let t = 0; t < turns; t++) {
    for (const role of ['user', 'assistant'] as const) {
      const seq = 2 * t + (role === 'user' ? 1 : 2);
      const n: DagNode = {
        id: `n${seq}`,
        session_id: SID,
        seq,
        role,
        content: `${role} ${t} `.repeat(repeat),
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

  it('a backfill hashes its pack in slices with host turns between them, and the repository is the same as without', async () => {
    // ~1,000 message files of ~2.5 KB: a pack of megabytes (hashed in 1 MB slices), a split index.
    const dag = await longDag(500, 250);
    const results: { tip: string; pack: Buffer[]; files: string; hashTicks: Set<number>; wholeHashes: number }[] = [];
    for (const yieldEveryMs of [1e-9, 0]) {
      let ticks = 0;
      let on = true;
      const tick = () => {
        ticks++;
        if (on) setImmediate(tick);
      };
      setImmediate(tick);
      // The codec, watched: when each slice of a large input is hashed, and how often one is hashed whole.
      const hashTicks = new Set<number>();
      let wholeHashes = 0;
      const codec: Codec = {
        ...nodeCodec,
        sha1: (data) => {
          if (data.length > 1 << 20) wholeHashes++;
          return nodeCodec.sha1(data);
        },
        sha1Stream: () => {
          const h = nodeCodec.sha1Stream!();
          return {
            update: (data) => {
              hashTicks.add(ticks);
              h.update(data);
            },
            digest: () => h.digest(),
          };
        },
      };
      const root = tempDir();
      // yieldEveryMs this small makes every check a turn: what is asserted is a count, not a time.
      const mirror = createMirror({ dag, root, storage: { ...nodeStorage(), codec }, packTurns: true, yieldEveryMs });
      await mirror.sync(SID);
      on = false;
      const repo = join(root, SID);
      const packDir = join(repo, '.git', 'objects', 'pack');
      const pack = readdirSync(packDir)
        .filter((f) => f.endsWith('.pack') || f.endsWith('.idx'))
        .sort()
        .map((f) => readFileSync(join(packDir, f)));
      results.push({
        tip: git(repo, 'rev-parse', 'refs/heads/main'),
        pack,
        files: git(repo, 'ls-files', '-s'),
        hashTicks,
        wholeHashes,
      });
      expect(git(repo, 'status', '--porcelain')).toBe('');
    }
    const [yielding, never] = results;
    // Yielding: the pack's SHA-1 went in slices, the host had turns between them.
    expect(yielding!.hashTicks.size).toBeGreaterThan(1);
    expect(yielding!.wholeHashes).toBe(0);
    // Never: no turn for the host while the pack is hashed.
    expect(never!.hashTicks.size).toBeLessThanOrEqual(1);
    // The same commits, pack and index entries.
    expect(yielding!.tip).toBe(never!.tip);
    expect(yielding!.pack.length).toBeGreaterThan(0);
    expect(yielding!.pack.map((b) => b.toString('hex'))).toEqual(never!.pack.map((b) => b.toString('hex')));
    expect(yielding!.files).toBe(never!.files);
    expect(yielding!.files.trim().split('\n')).toHaveLength(1001);
  }, 120_000);

  it('a backfill reads back nothing of the pack it wrote (opening it sorts every object offset, in one piece)', async () => {
    const dag = await longDag(300, 4);
    const base = nodeStorage();
    const packReads: string[] = [];
    const watch = (path: string) => {
      if (path.includes('/objects/pack/')) packReads.push(path);
    };
    const storage = {
      ...base,
      fs: {
        ...base.fs,
        readFile: ((path: string, options?: never) => {
          watch(path);
          return base.fs.readFile(path, options);
        }) as typeof base.fs.readFile,
      },
      readRange: (path: string, start: number, end: number) => {
        watch(path);
        return base.readRange!(path, start, end);
      },
      readRangeInto: (path: string, start: number, target: Uint8Array) => {
        watch(path);
        return base.readRangeInto!(path, start, target);
      },
    };
    const root = tempDir();
    const mirror = createMirror({ dag, root, storage, packTurns: true });
    await mirror.sync(SID);
    const repo = join(root, SID);
    expect(readdirSync(join(repo, '.git', 'objects', 'pack')).filter((f) => f.endsWith('.idx'))).toHaveLength(1);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(git(repo, 'ls-files')).toContain('meta.json\n');
    expect(packReads).toEqual([]);
    // A later read (a replay) does open it.
    const [tip] = await mirror.log(SID);
    await mirror.read(SID, tip!.sha);
    expect(packReads.length).toBeGreaterThan(0);
  }, 120_000);

  it('a reconcile gives the host turns inside each session, more than real I/O alone does with yieldEveryMs 0; the same repositories', async () => {
    const dag = new MemoryDag();
    for (let s = 0; s < 3; s++) {
      const id = `s${s}`;
      await dag.createSession({ id, title: 'one turn', created_at: 1_700_000_000 + s });
      await dag.addNode({
        id: `${id}-u`,
        session_id: id,
        seq: 1,
        role: 'user',
        content: `hello ${s}`,
        predecessor: null,
        caller: null,
        created_at: 1_700_000_000,
        metadata: null,
      });
    }
    const tips: string[][] = [];
    const ticksPerSession: number[][] = [];
    for (const yieldEveryMs of [1e-9, 0]) {
      let ticks = 0;
      let on = true;
      const tick = () => {
        ticks++;
        if (on) setImmediate(tick);
      };
      setImmediate(tick);
      const root = tempDir();
      const mirror = createNodeMirror({ dag, root, yieldEveryMs });
      const at: number[] = [];
      let before = ticks;
      const report = await reconcile({
        dag,
        mirror,
        yieldEveryMs,
        onProgress: () => {
          at.push(ticks - before);
          before = ticks;
        },
      });
      on = false;
      expect(report.entries.map((e) => e.action)).toEqual(['backfilled', 'backfilled', 'backfilled']);
      ticksPerSession.push(at);
      tips.push(['s0', 's1', 's2'].map((id) => git(join(root, id), 'rev-parse', 'refs/heads/main')));
    }
    // Yielding: several turns inside each session's verify, sync and verify again.
    // (without: only what real I/O gives, a lock's wait or so).
    ticksPerSession[0]!.forEach((n, i) => expect(n).toBeGreaterThan(ticksPerSession[1]![i]! + 3));
    expect(tips[0]).toEqual(tips[1]);
  }, 120_000);

  it('refuses a negative yieldEveryMs', () => {
    expect(() => createNodeMirror({ dag: new MemoryDag(), root: tempDir(), yieldEveryMs: -1 })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
  });
});
