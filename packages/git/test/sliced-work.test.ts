// The long steps a backfill finishes with, in slices (issue 20, "never stall the host"): the index
// built in steps, the pack finished with a pause between slices, SHA-1 fed in parts. Each gives the
// same bytes as the work in one piece; how often it pauses is counted, never timed.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { portableCodec } from '../src/codec/codec.js';
import { sha1, sha1Stream } from '../src/codec/sha1.js';
import { CommitGraph, type GraphCommit } from '../src/commit-graph.js';
import { buildCommitGraph, buildCommitGraphSteps, writeCommitGraph } from '../src/commit-graph-write.js';
import { buildIndex, buildIndexSteps, type IndexEntry } from '../src/index-file.js';
import { objectId } from '../src/objects/frame.js';
import { PackBuilder } from '../src/pack/pack-builder.js';
import { memoryStorage } from '../src/storage/memory-storage.js';
import { storeFor } from '../src/storage/store.js';

const bytes = (n: number, seed = 1) => {
  const out = new Uint8Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) out[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
  return out;
};

const entry = (i: number): IndexEntry => ({
  path: `messages/${String(i).padStart(6, '0')}-u-n${i}.json`,
  oid: createHash('sha1').update(String(i)).digest('hex'),
  mode: 0o100644,
  ctimeSec: 1_700_000_000 + i,
  ctimeNsec: i,
  mtimeSec: 1_700_000_000 + i,
  mtimeNsec: i,
  dev: 1,
  ino: 1000 + i,
  uid: 0,
  gid: 0,
  size: 100 + i,
});

describe('SHA-1 fed in parts (Codec.sha1Stream)', () => {
  it('equals the hash of the whole, however the input is cut, for the portable hash and node:crypto', () => {
    for (const n of [0, 1, 55, 56, 63, 64, 65, 127, 128, 1000, 200_000]) {
      const data = bytes(n, n + 3);
      const whole = createHash('sha1').update(data).digest('hex');
      expect(sha1(data)).toBe(whole);
      for (const cut of [1, 7, 64, 100, 65_536]) {
        const h = sha1Stream();
        for (let i = 0; i < n; i += cut) h.update(data.subarray(i, i + cut));
        expect(h.digest()).toBe(whole);
      }
      const p = portableCodec.sha1Stream!();
      p.update(data);
      expect(p.digest()).toBe(whole);
    }
  });
});

describe('the index built in steps (buildIndexSteps)', () => {
  it('pauses every few hundred entries and gives the bytes buildIndex gives, sorted or not', () => {
    const entries = Array.from({ length: 5000 }, (_, i) => entry(i));
    for (const list of [entries, [...entries].reverse()]) {
      const steps = buildIndexSteps(list, portableCodec);
      let pauses = 0;
      let r = steps.next();
      for (; !r.done; r = steps.next()) pauses++;
      expect(pauses).toBeGreaterThanOrEqual(2 * Math.floor(5000 / 256));
      expect(Buffer.from(r.value).equals(Buffer.from(buildIndex(list, portableCodec)))).toBe(true);
    }
  });
});

describe('a pack finished in slices (PackBuilder.write with a pause)', () => {
  it('asks for a pause between slices of a pack of megabytes, awaits it, and writes the same pack and index', async () => {
    const written: { pack: Uint8Array; idx: Uint8Array; name: string }[] = [];
    const pauses: number[] = [];
    for (const pausing of [true, false]) {
      const store = storeFor(memoryStorage());
      const builder = new PackBuilder(store);
      for (let i = 0; i < 600; i++) {
        // Incompressible blobs of ~8 KB (stored, under STORED_BLOB_MAX): a pack of ~5 MB.
        const content = bytes(8000 + i, i + 1);
        builder.add(objectId(store.codec, 'blob', content), 'blob', content, null);
      }
      let asked = 0;
      let awaited = 0;
      const pause = () => {
        asked++;
        return Promise.resolve().then(() => {
          awaited++;
        });
      };
      const w = (await builder.write('/repo/.git', pausing ? pause : undefined))!;
      if (pausing) {
        expect(awaited).toBe(asked);
        pauses.push(asked);
      }
      const pack = (await store.read(w.pack))!;
      const idx = (await store.read(w.pack.replace(/\.pack$/, '.idx')))!;
      written.push({ pack, idx, name: w.pack });
      // The trailing checksum is the pack's SHA-1, as git checks it.
      expect(
        createHash('sha1')
          .update(pack.subarray(0, pack.length - 20))
          .digest('hex'),
      ).toBe(Buffer.from(pack.subarray(pack.length - 20)).toString('hex'));
    }
    // Copying and hashing ~5 MB in 1 MB slices, and the index: several pauses.
    expect(pauses[0]).toBeGreaterThanOrEqual(8);
    expect(written[0]!.name).toBe(written[1]!.name);
    expect(Buffer.from(written[0]!.pack).equals(Buffer.from(written[1]!.pack))).toBe(true);
    expect(Buffer.from(written[0]!.idx).equals(Buffer.from(written[1]!.idx))).toBe(true);
  });
});

describe('the commit-graph made in steps (buildCommitGraphSteps, writeCommitGraph with a pause)', () => {
  // A chain of 3,000 commits with a second branch off every hundredth: what a long backfill writes.
  const commits: GraphCommit[] = [];
  const oid = (s: string) => createHash('sha1').update(s).digest('hex');
  let parent: string | null = null;
  for (let i = 0; i < 3000; i++) {
    const c: GraphCommit = {
      oid: oid(`c${i}`),
      tree: oid(`t${i}`),
      parents: parent ? [parent] : [],
      time: 1_700_000_000 + i,
    };
    commits.push(c);
    if (i % 100 === 50) commits.push({ oid: oid(`b${i}`), tree: oid(`bt${i}`), parents: [c.oid], time: c.time + 1 });
    parent = c.oid;
  }

  it('pauses every few hundred commits and gives the bytes of the graph made in one piece', () => {
    const steps = buildCommitGraphSteps(commits, portableCodec);
    let pauses = 0;
    let r = steps.next();
    for (; !r.done; r = steps.next()) pauses++;
    expect(pauses).toBeGreaterThanOrEqual(5 * Math.floor(3000 / 256));
    const whole = buildCommitGraph(commits, portableCodec)!;
    expect(Buffer.from(r.value!).equals(Buffer.from(whole))).toBe(true);
    const graph = CommitGraph.parse(whole, portableCodec)!;
    expect(graph.count).toBe(commits.length);
    expect(graph.generation(graph.positionOf(commits.at(-1)!.oid))).toBe(3000);
  });

  it('writeCommitGraph awaits each pause it asks for and writes the same file; a graph it cannot make is none', async () => {
    const files: Uint8Array[] = [];
    for (const pausing of [true, false]) {
      const store = storeFor(memoryStorage());
      let asked = 0;
      let awaited = 0;
      const pause = () => {
        asked++;
        return Promise.resolve().then(() => {
          awaited++;
        });
      };
      expect(await writeCommitGraph(store, '/repo/.git', commits, pausing ? pause : undefined)).toBe(true);
      if (pausing) {
        expect(asked).toBeGreaterThanOrEqual(5 * Math.floor(3000 / 256));
        expect(awaited).toBe(asked);
      }
      files.push((await store.read('/repo/.git/objects/info/commit-graph'))!);
    }
    expect(Buffer.from(files[0]!).equals(Buffer.from(files[1]!))).toBe(true);
    const orphan = [{ ...commits[5]!, parents: [oid('missing')] }];
    const store = storeFor(memoryStorage());
    expect(await writeCommitGraph(store, '/repo/.git', orphan, () => Promise.resolve())).toBe(false);
    expect(await store.read('/repo/.git/objects/info/commit-graph')).toBeNull();
  });
});
