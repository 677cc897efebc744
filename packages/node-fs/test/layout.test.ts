import {
  canonicalJson,
  createMirror,
  MemoryDag,
  messageFileName,
  reconcile,
  shardOf,
  type DagNode,
} from '@entity-git/core';
import { createNodeMirror, nodeStorage } from '@entity-git/node-fs';
import { GOLDEN_SESSION, goldenNodes, writeGolden } from '@entity-git/test-utils';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from './helpers.js';

const SID = GOLDEN_SESSION.id;
// Fixed by the golden DAG, the default identity and the sharded layout; equal in the browser.
const SHARDED_TIPS = {
  main: 'd40c1628d1614b314609b730db3c86d7c91a5afe',
  'retry-a4r': '1351fc5cfda3c78894e4fe7b9f24bf039e679c3c',
  'fork-u2e': '713197294cf6b78b2aacc4b901d27a5161f053de',
  'fork-u4': '84641703ebed612c69c87ff666a0e9dc41a3cc03',
};

const tipsOf = (dir: string) =>
  Object.fromEntries(
    git(dir, 'for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads')
      .trim()
      .split('\n')
      .map((l) => l.split(' ')),
  );

/**
 * The root tree native git builds from the files a commit should hold: `meta.json` and each
 * message at `messages/<path>`, written into a scratch work tree and added with `git add`.
 */
function nativeTree(meta: Buffer, files: Map<string, string>): string {
  const dir = tempDir('eg-native-');
  git(dir, 'init', '-q');
  writeFileSync(join(dir, 'meta.json'), meta);
  for (const [path, text] of files) {
    mkdirSync(dirname(join(dir, 'messages', path)), { recursive: true });
    writeFileSync(join(dir, 'messages', path), text);
  }
  git(dir, 'add', '-A');
  const tree = git(dir, 'write-tree').trim();
  rmSync(dir, { recursive: true, force: true });
  return tree;
}

/** A linear conversation whose seqs jump across shard boundaries (gaps are allowed). */
function crossing(sessionId: string): DagNode[] {
  const seqs = [1, 2, 998, 999, 1000, 1001, 1999, 2000, 2001, 2002, 12_345, 12_346];
  let prev: string | null = null;
  return seqs.map((seq, i) => {
    const n: DagNode = {
      id: `m${seq}`,
      session_id: sessionId,
      seq,
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `message ${seq}`,
      predecessor: prev,
      caller: null,
      created_at: 1779500000 + seq,
      metadata: null,
    };
    prev = n.id;
    return n;
  });
}

describe('the sharded layout', () => {
  it('puts each message under messages/<seq div 1000>/, with the trees native git builds from the same files', async () => {
    const dag = new MemoryDag();
    await dag.createSession({ id: 'long', title: 'Long', created_at: 1779500000 });
    const nodes = crossing('long');
    for (const n of nodes) await dag.addNode(n);
    const root = tempDir();
    const mirror = createNodeMirror({ dag, root, layout: 'sharded' });
    const result = await mirror.sync('long');
    expect(result.commitsWritten).toBe(6);
    const dir = mirror.repoPath('long');
    expect(git(dir, 'config', '--get', 'entitygit.layout').trim()).toBe('sharded');
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(git(dir, 'ls-tree', '-r', '--name-only', 'HEAD').trim().split('\n')).toEqual([
      'messages/000/000001-u-m1.json',
      'messages/000/000002-a-m2.json',
      'messages/000/000998-u-m998.json',
      'messages/000/000999-a-m999.json',
      'messages/001/001000-u-m1000.json',
      'messages/001/001001-a-m1001.json',
      'messages/001/001999-u-m1999.json',
      'messages/002/002000-a-m2000.json',
      'messages/002/002001-u-m2001.json',
      'messages/002/002002-a-m2002.json',
      'messages/012/012345-u-m12345.json',
      'messages/012/012346-a-m12346.json',
      'meta.json',
    ]);
    // Every commit's tree is the one native git makes of the same files.
    const meta = readFileSync(join(dir, 'meta.json'));
    const commits = git(dir, 'rev-list', '--reverse', 'HEAD').trim().split('\n');
    expect(commits).toHaveLength(6);
    for (const [k, sha] of commits.entries()) {
      const files = new Map(
        nodes.slice(0, 2 * (k + 1)).map((n) => [`${shardOf(n.seq)}/${messageFileName(n)}`, canonicalJson(n)]),
      );
      expect(git(dir, 'rev-parse', `${sha}^{tree}`).trim()).toBe(nativeTree(meta, files));
    }
    // Replay reads the nested trees back into the DAG's nodes.
    const view = await mirror.read('long', commits[3]!);
    expect(view.turn).toBe(4);
    expect(view.messages).toEqual(nodes.slice(0, 8));
    expect(await mirror.verify('long')).toEqual({ sessionId: 'long', ok: true, differences: [] });
    expect(await mirror.sync('long')).toMatchObject({ noop: true, commitsWritten: 0 });
  });

  it('gives the golden session its own fixed ids, one tree per shard, judged clean by native git', async () => {
    const dag = new MemoryDag();
    await writeGolden(dag);
    const mirror = createNodeMirror({ dag, root: tempDir(), layout: 'sharded' });
    const result = await mirror.sync(SID);
    expect(result).toMatchObject({ head: 'fork-u4', commitsWritten: 5 });
    const dir = mirror.repoPath(SID);
    expect(tipsOf(dir)).toEqual(SHARDED_TIPS);
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(
      git(dir, 'ls-tree', 'HEAD:messages')
        .trim()
        .split('\n')
        .map((l) => l.split('\t')[1]),
    ).toEqual(['000']);
    const meta = readFileSync(join(dir, 'meta.json'));
    const byId = new Map(goldenNodes().map((n) => [n.id, n]));
    for (const branch of Object.keys(SHARDED_TIPS)) {
      const view = await mirror.read(SID, SHARDED_TIPS[branch as keyof typeof SHARDED_TIPS], { branch });
      expect(view.messages.every((m) => canonicalJson(m) === canonicalJson(byId.get(m.id)!))).toBe(true);
      const files = new Map(view.messages.map((n) => [`000/${messageFileName(n)}`, canonicalJson(n)]));
      expect(git(dir, 'rev-parse', `${branch}^{tree}`).trim()).toBe(nativeTree(meta, files));
    }
  });

  it('is kept by the repository: a mirror with another layout option adds to the history in its layout', async () => {
    const dag = new MemoryDag();
    await dag.createSession({ id: 'kept', title: 'Kept', created_at: 1779500000 });
    const nodes = crossing('kept');
    for (const n of nodes.slice(0, 6)) await dag.addNode(n);
    const root = tempDir();
    await createNodeMirror({ dag, root, layout: 'sharded' }).sync('kept');
    for (const n of nodes.slice(6)) await dag.addNode(n);
    const flat = createNodeMirror({ dag, root });
    expect(await flat.sync('kept')).toMatchObject({ commitsWritten: 3 });
    const dir = flat.repoPath('kept');
    expect(git(dir, 'ls-tree', '--name-only', 'HEAD:messages').trim().split('\n')).toEqual([
      '000',
      '001',
      '002',
      '012',
    ]);
    const reference = createNodeMirror({ dag, root: tempDir(), layout: 'sharded' });
    await reference.sync('kept');
    expect(tipsOf(dir)).toEqual(tipsOf(reference.repoPath('kept')));
    expect(await flat.verify('kept')).toMatchObject({ ok: true });

    // And a flat repository stays flat under a sharded mirror.
    const golden = new MemoryDag();
    await writeGolden(golden);
    const flatRoot = tempDir();
    await createNodeMirror({ dag: golden, root: flatRoot }).sync(SID);
    const sharded = createNodeMirror({ dag: golden, root: flatRoot, layout: 'sharded' });
    expect(await sharded.sync(SID)).toMatchObject({ noop: true, commitsWritten: 0 });
    expect(git(sharded.repoPath(SID), 'config', '--get', 'entitygit.layout').trim()).toBe('flat');
    expect(await sharded.verify(SID)).toMatchObject({ ok: true });
  });

  it('is found in the trees when the config does not record it (a clone), and recorded again', async () => {
    const dag = new MemoryDag();
    await dag.createSession({ id: 'cloned', title: 'Cloned', created_at: 1779500000 });
    const nodes = crossing('cloned');
    for (const n of nodes.slice(0, 8)) await dag.addNode(n);
    const root = tempDir();
    const first = createNodeMirror({ dag, root, layout: 'sharded' });
    await first.sync('cloned');
    const dir = first.repoPath('cloned');
    const before = tipsOf(dir);
    git(dir, 'config', '--remove-section', 'entitygit');
    rmSync(join(dir, '.git', 'entity-git-state.json'), { force: true }); // the mirror's cache, forgotten
    for (const n of nodes.slice(8)) await dag.addNode(n);
    // A new mirror (no memory of the repository) whose own option is flat.
    const later = createNodeMirror({ dag, root });
    // The index lacks the new turns' files, and so does the working tree (each reported).
    const found = (await later.verify('cloned')).differences;
    expect(found.map((d) => d.kind)).toEqual(['branch-differs', 'worktree-differs', 'worktree-differs']);
    expect(found[2]!.detail).toMatch(/^the working tree of .* lacks /);
    expect(await later.sync('cloned')).toMatchObject({ commitsWritten: 2 });
    expect(git(dir, 'config', '--get', 'entitygit.layout').trim()).toBe('sharded');
    expect(git(dir, 'rev-list', '--count', 'HEAD').trim()).toBe('6');
    expect(git(dir, 'rev-parse', 'HEAD~2').trim()).toBe(before.main);
    expect(await later.verify('cloned')).toEqual({ sessionId: 'cloned', ok: true, differences: [] });
  });

  it('is repaired like the flat one: reconcile puts back the same ids after damage', async () => {
    const dag = new MemoryDag();
    await writeGolden(dag);
    const root = tempDir();
    const mirror = createNodeMirror({ dag, root, layout: 'sharded' });
    await mirror.sync(SID);
    const dir = mirror.repoPath(SID);
    writeFileSync(join(dir, '.git', 'refs', 'heads', 'main'), '');
    const fresh = createMirror({ dag, root, storage: nodeStorage(), layout: 'sharded' });
    const report = await reconcile({ dag, mirror: fresh });
    expect(report.entries.find((s) => s.sessionId === SID)).toMatchObject({ action: 'repaired' });
    expect(tipsOf(dir)).toEqual(SHARDED_TIPS);
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
  });

  it('rejects an unknown layout with INVALID_OPTION', () => {
    expect(() => createNodeMirror({ dag: new MemoryDag(), root: tempDir(), layout: 'nested' as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
  });
});

describe('the repository format', () => {
  it('is 2 in a new repository; an older one recorded is refused by sync (REPO_FORMAT_OLD) and reported by verify, nothing moved', async () => {
    const dag = new MemoryDag();
    await writeGolden(dag);
    const root = tempDir();
    await createNodeMirror({ dag, root }).sync(SID);
    const dir = join(root, SID);
    expect(git(dir, 'config', '--get', 'entitygit.format').trim()).toBe('2');
    const before = tipsOf(dir);
    git(dir, 'config', 'entitygit.format', '1');
    const fresh = createNodeMirror({ dag, root });
    await expect(fresh.sync(SID)).rejects.toMatchObject({ code: 'REPO_FORMAT_OLD', data: { format: 1 } });
    await expect(fresh.sync(SID, { full: true })).rejects.toMatchObject({ code: 'REPO_FORMAT_OLD' });
    expect((await fresh.verify(SID)).differences.map((d) => d.kind)).toContain('format-old');
    expect(tipsOf(dir)).toEqual(before);
    git(dir, 'config', 'entitygit.format', '3');
    await expect(createNodeMirror({ dag, root }).sync(SID)).rejects.toMatchObject({
      code: 'REPO_CORRUPT',
      data: { format: 3 },
    });
    expect(tipsOf(dir)).toEqual(before);
  });
});
