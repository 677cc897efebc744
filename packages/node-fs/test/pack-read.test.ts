import { canonicalJson, MemoryDag, packSession as packRepository, type DagNode } from '@entity-git/core';
import { gitBlobId, ObjectStore, Store, STORED_BLOB_MAX } from '@entity-git/git';
import { createNodeMirror, nodeStorage } from '@entity-git/node-fs';
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { git, noise, tempDir } from './helpers.js';

const SID = 's';
const BASE = 1779500000;

/** The JSON bytes a node's blob holds beyond its content, so a content of `n - overhead` makes an `n`-byte blob. */
const overhead = (seq: number, role: DagNode['role'], predecessor: string | null) =>
  canonicalJson(node(seq, role, '', predecessor)).length;

function node(seq: number, role: DagNode['role'], content: string, predecessor: string | null): DagNode {
  return {
    id: `n${seq}`,
    session_id: SID,
    seq,
    role,
    content,
    predecessor,
    caller: null,
    created_at: BASE + seq,
    metadata: null,
  };
}

/**
 * A session of `turns` turns of four nodes whose blobs are of many sizes: a few bytes, noise of a
 * few kilobytes, exactly {@link STORED_BLOB_MAX} and one byte more, and 40 KB (packed, as under
 * 64 KB). Returns the DAG and its nodes in seq order.
 */
async function session(turns: number): Promise<{ dag: MemoryDag; nodes: DagNode[] }> {
  const dag = new MemoryDag();
  await dag.createSession({ id: SID, title: 'pack reads', created_at: BASE });
  const nodes: DagNode[] = [];
  let prev: string | null = null;
  for (let t = 0; t < turns; t++) {
    for (const [k, role] of (['user', 'assistant', 'tool', 'assistant'] as const).entries()) {
      const seq = nodes.length + 1;
      const size = [STORED_BLOB_MAX, STORED_BLOB_MAX + 1, 40_000, 0][(t + k) % 4]!;
      const content =
        size === 0 ? `${role} ${seq} ${noise(500 + 97 * t)}` : 'x'.repeat(size - overhead(seq, role, prev));
      const n = node(seq, role, content, prev);
      await dag.addNode(n);
      nodes.push(n);
      prev = n.id;
    }
  }
  return { dag, nodes };
}

/** Every blob of the repository's packs as `git verify-pack -v` lists it. */
function packedBlobs(
  gitdir: string,
): { oid: string; size: number; inPack: number; offset: number; delta: boolean; pack: string }[] {
  const dir = join(gitdir, 'objects', 'pack');
  return readdirSync(dir)
    .filter((n) => n.endsWith('.idx'))
    .flatMap((idx) =>
      git(dir, 'verify-pack', '-v', idx)
        .split('\n')
        .map((l) => l.split(/\s+/))
        .filter((f) => f[1] === 'blob')
        .map((f) => ({
          oid: f[0]!,
          size: Number(f[2]),
          inPack: Number(f[3]),
          offset: Number(f[4]),
          delta: f.length > 5,
          pack: join(dir, idx.replace(/\.idx$/, '.pack')),
        })),
    );
}

/** Bytes of a pack entry's header for an object of `size` bytes (4 bits, then 7 a byte). */
const headLength = (size: number) => (size < 16 ? 1 : size < 2048 ? 2 : size < 1 << 18 ? 3 : 4);
/** A stored entry's bytes in its pack: its header, zlib's 2, the block's 5, the bytes, Adler-32's 4. */
const storedLength = (size: number) => headLength(size) + 2 + 5 + size + 4;

/** A session of `turns` turns backfilled by a node mirror (one pack), and where it is. */
async function backfilled(turns: number) {
  const { dag, nodes } = await session(turns);
  const root = tempDir();
  const mirror = createNodeMirror({ dag, root });
  await mirror.sync(SID);
  const dir = mirror.repoPath(SID);
  return { dag, nodes, root, mirror, dir, gitdir: join(dir, '.git') };
}

/** A fresh mirror's view of the turn at each commit of `main` equals the DAG's nodes up to it. */
async function expectReads(dag: MemoryDag, root: string, nodes: DagNode[], turns: number[]): Promise<void> {
  const mirror = createNodeMirror({ dag, root });
  const log = await mirror.log(SID);
  for (const turn of turns) {
    const view = await mirror.read(SID, log[log.length - turn]!.sha);
    expect(view.turn).toBe(turn);
    expect(view.messages.map((m) => canonicalJson(m))).toEqual(nodes.slice(0, 4 * turn).map((n) => canonicalJson(n)));
  }
}

/** `git verify-pack -v`'s chain of each deltified object: oid → its depth. */
function chainDepths(gitdir: string): Map<string, number> {
  const dir = join(gitdir, 'objects', 'pack');
  const out = new Map<string, number>();
  for (const idx of readdirSync(dir).filter((n) => n.endsWith('.idx'))) {
    for (const f of git(dir, 'verify-pack', '-v', idx)
      .split('\n')
      .map((l) => l.split(/\s+/)))
      if (f.length > 6 && /^[0-9a-f]{40}$/.test(f[0]!)) out.set(f[0]!, Number(f[5]));
  }
  return out;
}

describe('delta chains in packs native git wrote', () => {
  it('a file edited over 120 commits, repacked to chains up to 50 deep: every version read as git reads it, in any order', async () => {
    const dir = tempDir();
    git(dir, 'init', '-q');
    // Lines inserted, removed and replaced all over the file, a commit each (one fast-import).
    const lines = Array.from({ length: 400 }, (_, i) => `line ${i} ${noise(30 + (i % 50))}`);
    const texts: string[] = [];
    let stream = '';
    for (let c = 0; c < 120; c++) {
      const at = (c * 37) % lines.length;
      if (c % 3 !== 1) lines.splice(at, 0, `inserted ${c} ${noise(40)}`);
      else if (c % 2 === 0) lines.splice(at, 1);
      else lines[at] = `changed ${c} ${noise(60)}`;
      const text = lines.join('\n');
      texts.push(text);
      stream += `commit refs/heads/main\ncommitter t <t@t> ${BASE + c} +0000\ndata ${`c${c}`.length}\nc${c}\nM 100644 inline f.txt\ndata ${Buffer.byteLength(text)}\n${text}\n`;
    }
    execFileSync('git', ['fast-import', '--quiet'], { cwd: dir, input: stream });
    git(dir, 'repack', '-a', '-d', '-f', '-q', '--depth=50', '--window=100');
    expect(git(dir, 'fsck', '--strict')).toBe('');
    const gitdir = join(dir, '.git');
    // Each commit's blob of f.txt, oldest first, as git names it.
    const versions = git(dir, 'log', '--reverse', '--raw', '--no-abbrev', '--format=', 'main')
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/)[3]!);
    expect(versions.length).toBe(120);
    const depths = chainDepths(gitdir);
    expect(Math.max(...versions.map((v) => depths.get(v) ?? 0))).toBeGreaterThan(30);
    const expected = new Map(versions.map((v, c) => [v, texts[c]!]));
    const fresh = () => new ObjectStore(new Store(nodeStorage()), gitdir);
    // Oldest first, newest first, and a stride through them: each order reuses other links.
    for (const order of [
      versions,
      [...versions].reverse(),
      versions.map((_, i) => versions[(i * 7) % versions.length]!),
    ]) {
      const objects = fresh();
      for (const v of order) expect(Buffer.from(await objects.readTyped(v, 'blob')).toString()).toBe(expected.get(v));
    }
    // Each alone on a fresh store (no link read before), and all at once in a bulk read.
    for (const v of versions.filter((_, i) => i % 9 === 0))
      expect(Buffer.from(await fresh().readTyped(v, 'blob')).toString()).toBe(expected.get(v));
    expect((await fresh().readManyTyped(versions, 'blob')).map((b) => Buffer.from(b).toString())).toEqual(
      versions.map((v) => expected.get(v)),
    );
  });
});

describe('packed blobs', () => {
  it(`a blob of up to ${STORED_BLOB_MAX} bytes is stored in a pack, a larger one compressed — backfill, turn packs, both packers; git verifies them and the mirror reads every turn`, async () => {
    const { dag, nodes, root, mirror, dir, gitdir } = await backfilled(40); // a backfill: one pack
    const more = await session(44);
    for (const n of more.nodes.slice(nodes.length)) {
      await dag.addNode(n);
      if (n.seq % 4 === 0) await mirror.sync(SID); // a live turn: a pack of its own
    }
    nodes.push(...more.nodes.slice(nodes.length));
    const blobs = packedBlobs(gitdir);
    expect(readdirSync(join(gitdir, 'objects', 'pack')).filter((n) => n.endsWith('.pack'))).toHaveLength(5);
    // Every message blob is in a pack: the sizes around the bound are there, on both sides of it.
    const inPacks = new Set(blobs.map((b) => b.oid));
    expect(nodes.filter((n) => !inPacks.has(gitBlobId(canonicalJson(n)))).map((n) => n.id)).toEqual([]);
    expect(blobs.filter((b) => b.size === STORED_BLOB_MAX).length).toBeGreaterThanOrEqual(44);
    expect(blobs.filter((b) => b.size === STORED_BLOB_MAX + 1).length).toBeGreaterThanOrEqual(44);
    expect(blobs.filter((b) => b.delta)).toEqual([]);
    for (const b of blobs) {
      // Stored: its bytes and the framing. Compressed: fewer than its bytes.
      if (b.size <= STORED_BLOB_MAX) expect(b.inPack, `${b.oid} (${b.size} bytes)`).toBe(storedLength(b.size));
      else expect(b.inPack, `${b.oid} (${b.size} bytes)`).toBeLessThan(b.size);
    }
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    await expectReads(dag, root, nodes, [1, 20, 40, 41, 44]);

    // Merged by entity-git's packer, and by native git: the same rule, the same reads.
    for (const native of [false, true]) {
      if (native) git(dir, 'repack', '-a', '-d', '-q');
      else await packRepository(new Store(nodeStorage()), gitdir);
      const merged = packedBlobs(gitdir);
      // …and the meta ref's session.json, written loose beside the backfill's pack.
      expect(new Set(merged.map((b) => b.oid))).toEqual(
        new Set([...blobs.map((b) => b.oid), git(dir, 'rev-parse', 'refs/entity-git/meta:session.json').trim()]),
      );
      // (Native git may store a blob as a delta of a like one: its own choice, read all the same.)
      for (const b of merged) if (b.size <= STORED_BLOB_MAX && !b.delta) expect(b.inPack).toBe(storedLength(b.size));
      if (!native) expect(merged.filter((b) => b.delta)).toEqual([]);
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      await expectReads(dag, root, nodes, [1, 40, 44]);
    }
  });

  it('packs native git compressed (its default, and level 0) are read the same', async () => {
    const { dag, nodes, root, dir } = await backfilled(36);
    for (const level of ['6', '0']) {
      git(dir, '-c', `pack.compression=${level}`, 'repack', '-a', '-d', '-F', '-q');
      const blobs = packedBlobs(join(dir, '.git'));
      const small = blobs.filter(
        (b) => b.size > 1000 && b.size <= STORED_BLOB_MAX && b.inPack === storedLength(b.size),
      );
      // Level 0: git's zlib writes the small blobs stored; level 6 compresses them.
      expect(small.length > 0).toBe(level === '0');
      await expectReads(dag, root, nodes, [1, 18, 36]);
    }
  });

  it('a stored blob damaged in its pack is refused (OBJECT_CORRUPT), and read from a good loose copy once there is one', async () => {
    const { dag, nodes, root, mirror, dir, gitdir } = await backfilled(36);
    const victim = nodes[3]!; // a blob of a few hundred bytes of noise, stored
    const bytes = Buffer.from(canonicalJson(victim));
    const oid = git(
      dir,
      'rev-parse',
      `HEAD:messages/${git(dir, 'ls-tree', '--name-only', 'HEAD', 'messages/')
        .split('\n')
        .find((p) => p.endsWith(`-${victim.id}.json`))!
        .slice('messages/'.length)}`,
    ).trim();
    const entry = packedBlobs(gitdir).find((b) => b.oid === oid)!;
    expect(entry.inPack).toBe(storedLength(bytes.length));
    // One byte of its content changed in place, the stream still a valid stored block: only the id tells.
    const pack = readFileSync(entry.pack);
    const at = entry.offset + headLength(bytes.length) + 7 + bytes.indexOf('"content":"') + 12;
    expect(pack[at]).toBe(bytes[bytes.indexOf('"content":"') + 12]);
    pack[at] ^= 0x01;
    chmodSync(entry.pack, 0o644);
    writeFileSync(entry.pack, pack);
    const log = await mirror.log(SID);
    // A mirror that opens the pack now (the one that wrote it keeps the bytes it read before).
    await expect(createNodeMirror({ dag, root }).read(SID, log[0]!.sha)).rejects.toMatchObject({
      code: 'OBJECT_CORRUPT',
    });
    // The good bytes loose (written here: git's hash-object writes none of an object a pack holds),
    // and the read takes them: a loose copy repairs a damaged packed one.
    mkdirSync(join(gitdir, 'objects', oid.slice(0, 2)), { recursive: true });
    writeFileSync(
      join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2)),
      deflateSync(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes])),
    );
    expect(git(dir, 'cat-file', 'blob', oid)).toBe(bytes.toString());
    const view = await createNodeMirror({ dag, root }).read(SID, log[0]!.sha);
    expect(view.messages.map((m) => canonicalJson(m))).toEqual(nodes.map((n) => canonicalJson(n)));
  });

  it('readManyTyped gives what readTyped gives, over blocks of a pack, loose objects and repeats; and its errors', async () => {
    const { nodes, dir, gitdir } = await backfilled(40);
    const packed = packedBlobs(gitdir);
    expect(Math.max(...packed.map((b) => b.offset))).toBeGreaterThan(3 << 18); // in the fourth block of 256 KB
    const objects = new ObjectStore(new Store(nodeStorage()), gitdir);
    const loose = await objects.write('blob', new TextEncoder().encode('a loose blob\n'));
    expect(git(dir, 'cat-file', '-t', loose).trim()).toBe('blob');
    // Packed ones in an order other than the pack's, a loose one, repeats.
    const ids = [...packed.map((b) => b.oid).reverse(), loose, packed[3]!.oid, loose];
    const many = await new ObjectStore(new Store(nodeStorage()), gitdir).readManyTyped(ids, 'blob');
    const one: Uint8Array[] = [];
    for (const id of ids) one.push(await objects.readTyped(id, 'blob'));
    expect(many.map((b) => Buffer.from(b).toString('hex'))).toEqual(one.map((b) => Buffer.from(b).toString('hex')));
    expect(new Set(many.map((b) => Buffer.from(b).toString('utf8')))).toEqual(
      new Set([
        ...nodes.map((n) => canonicalJson(n)),
        git(dir, 'cat-file', 'blob', 'HEAD:meta.json'),
        // The meta ref's blob: in the backfill's pack since issue 22 (not loose).
        git(dir, 'cat-file', 'blob', 'refs/entity-git/meta:session.json'),
        'a loose blob\n',
      ]),
    );

    const fresh = () => new ObjectStore(new Store(nodeStorage()), gitdir);
    const tree = git(dir, 'rev-parse', 'HEAD:messages').trim();
    await expect(fresh().readManyTyped([packed[0]!.oid, '0'.repeat(40)], 'blob')).rejects.toMatchObject({
      code: 'OBJECT_NOT_FOUND',
    });
    await expect(fresh().readManyTyped([packed[0]!.oid, tree], 'blob')).rejects.toMatchObject({
      code: 'OBJECT_CORRUPT',
    });
    for (const hostile of ['../..', '.git', 'a\u0000b', packed[0]!.oid.toUpperCase(), `${packed[0]!.oid}0`]) {
      await expect(fresh().readManyTyped([packed[0]!.oid, hostile], 'blob')).rejects.toMatchObject({
        code: 'OBJECT_NOT_FOUND',
      });
    }
    expect(await fresh().readManyTyped([], 'blob')).toEqual([]);
  });

  it('bulk reads running at once (each through a scratch buffer of its own), and over a storage that reads packs whole, give the same bytes', async () => {
    const { dir, gitdir } = await backfilled(40);
    const ids = packedBlobs(gitdir).map((b) => b.oid);
    const expected = ids.map((id) => git(dir, 'cat-file', 'blob', id));
    const asText = (all: Uint8Array[]) => all.map((b) => Buffer.from(b).toString('utf8'));
    // Eight at once on one store, in different orders: no read sees another's buffer.
    const objects = new ObjectStore(new Store(nodeStorage()), gitdir);
    const orders = Array.from({ length: 8 }, (_, k) => ids.map((_, i) => (i * (2 * k + 1)) % ids.length));
    const results = await Promise.all(
      orders.map((order) =>
        objects.readManyTyped(
          order.map((i) => ids[i]!),
          'blob',
        ),
      ),
    );
    results.forEach((got, k) => expect(asText(got)).toEqual(orders[k]!.map((i) => expected[i])));
    // A storage without readRange reads the pack whole; without readRangeInto, through readRange.
    const { readRange: _r, readRangeInto: _ri, ...whole } = nodeStorage();
    const { readRangeInto: _i, ...ranges } = nodeStorage();
    for (const storage of [whole, ranges])
      expect(asText(await new ObjectStore(new Store(storage), gitdir).readManyTyped(ids, 'blob'))).toEqual(expected);
  });
});
