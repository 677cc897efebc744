import { canonicalJson, MemoryDag, META_REF, type DagNode } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { GOLDEN_SESSION, goldenNodes, writeGolden } from '@entity-git/test-utils';
import { appendFileSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, gitBytes, tempDir } from './helpers.js';

const SID = GOLDEN_SESSION.id;
// Fixed by the golden DAG, the default identity and the flat layout; equal in the browser. They
// changed once, in issue 19, when meta.json lost the session's mutable fields.
const GOLDEN_TIPS = {
  main: '2d6739e6531c79338d437bcd12e6a1911db229f3',
  'retry-a4r': 'd080c326d39a5951408d85b37d2ad5734ef66218',
  'fork-u2e': '91b1853f7d112a2d1c527c327cbb1fe5c82401c6',
  'fork-u4': '17a4c695c75333ca3ac7710e31cd26d953bab6d6',
};
const GOLDEN_TURN1 = '4b1cc3d267e0d1e614cf1f5670401133cff1ac7f';
// After the fixed scenario of row edits below: main's third turn, and the meta ref (both as in Chromium).
const FILLED_MAIN = '9283c4f2c088bb5a57b8195c890b61f523eb684b';
const RENAMED_META = 'a865109a8f74d2e0f84ad9b6527732b99c576abc';

async function goldenRepo() {
  const dag = new MemoryDag();
  await writeGolden(dag);
  const root = tempDir();
  const mirror = createNodeMirror({ dag, root });
  const result = await mirror.sync(SID);
  return { dag, root, mirror, result, dir: mirror.repoPath(SID) };
}

const tipsOf = (dir: string) =>
  Object.fromEntries(
    git(dir, 'for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads')
      .trim()
      .split('\n')
      .map((l) => l.split(' ')),
  );

describe('golden session on node-fs', () => {
  it('gives the exact commit ids, branch names and HEAD', async () => {
    const { result, dir } = await goldenRepo();
    expect(result.head).toBe('fork-u4');
    expect(result.commitsWritten).toBe(5);
    expect(tipsOf(dir)).toEqual(GOLDEN_TIPS);
    expect(git(dir, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/fork-u4');
    for (const b of Object.keys(GOLDEN_TIPS))
      expect(git(dir, 'rev-list', '--max-parents=0', b).trim()).toBe(GOLDEN_TURN1);
  });

  it('is judged clean by native git: fsck --strict, status, subjects, bodies', async () => {
    const { dir } = await goldenRepo();
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    const subjects = (b: string) => git(dir, 'log', '--format=%s', b).trim().split('\n');
    expect(subjects('main')).toEqual([
      'turn 2: Now grep for TODO in every file, including the tests and the',
      'turn 1: 列出 src 目录中的文件 🙂 请简短回答',
    ]);
    expect(subjects('retry-a4r')).toEqual([
      'turn 2: Now grep for TODO in every file, including the tests and the',
      'turn 1: 列出 src 目录中的文件 🙂 请简短回答',
    ]);
    expect(subjects('fork-u2e')).toEqual(['turn 2: Now grep for FIXME', 'turn 1: 列出 src 目录中的文件 🙂 请简短回答']);
    expect(subjects('fork-u4')).toEqual([
      'turn 2: 从头开始：总结这个仓库',
      'turn 1: 列出 src 目录中的文件 🙂 请简短回答',
    ]);
    expect(git(dir, 'log', '-1', '--format=%B', 'main')).toBe(
      'turn 2: Now grep for TODO in every file, including the tests and the\n\nassistant: Found 3 TODOs.\ntools: grep × 3\n\n' +
        '[meta: turn took 7.5s, 3 tools, 90 tokens]\n\nSession: golden-1\nTurn: 2\nNode: a4\nSeq: 12\n\n',
    );
    expect(git(dir, 'log', '-1', '--format=%B', GOLDEN_TURN1)).toBe(
      'turn 1: 列出 src 目录中的文件 🙂 请简短回答\n\nassistant: There are two files: a.ts and b.ts. 👍 完成\ntools: list, read\n\n' +
        '[meta: turn took 7.5s, 2 tools, 420 tokens]\n\nSession: golden-1\nTurn: 1\nNode: a2\nSeq: 6\n\n',
    );
    // 80 code points of emoji, never half a surrogate pair.
    const retryBody = git(dir, 'log', '-1', '--format=%b', 'retry-a4r').split('\n')[0]!;
    expect(Array.from(retryBody.slice('assistant: '.length))).toHaveLength(80);
    expect(git(dir, 'log', '-1', '--format=%an <%ae> %at|%cn <%ce> %ct', 'main').trim()).toBe(
      'entity-git <entity-git@localhost> 1779500018|entity-git <entity-git@localhost> 1779500018',
    );
  });

  it('writes the working tree of HEAD: exact file names and canonical bytes', async () => {
    const { dir } = await goldenRepo();
    expect(readdirSync(join(dir, 'messages'))).toEqual([
      '000001-s-s1.json',
      '000002-u-u1.json',
      '000003-a-a1.json',
      '000004-t-t1.json',
      '000005-t-t2.json',
      '000006-a-a2.json',
      '000018-u-u4.json',
      '000019-a-a7.json',
    ]);
    const nodes = new Map(goldenNodes().map((n) => [n.id, n]));
    expect(readFileSync(join(dir, 'messages/000002-u-u1.json'), 'utf8')).toBe(
      '{\n  "caller": null,\n  "content": "列出 src 目录中的文件 🙂\\n请简短回答",\n  "created_at": 1779500003,\n  "id": "u1",\n' +
        '  "metadata": null,\n  "predecessor": "s1",\n  "role": "user",\n  "seq": 2,\n  "session_id": "golden-1"\n}\n',
    );
    for (const name of readdirSync(join(dir, 'messages'))) {
      const id = name.replace(/^\d{6}-.-/, '').replace(/\.json$/, '');
      const bytes = readFileSync(join(dir, 'messages', name), 'utf8');
      expect(bytes).toBe(canonicalJson(nodes.get(id)));
      expect(gitBytes(dir, 'cat-file', '-p', `HEAD:messages/${name}`).toString('utf8')).toBe(bytes);
    }
    // The immutable fields only: the title, model, project and metadata are on the meta ref.
    expect(readFileSync(join(dir, 'meta.json'), 'utf8')).toBe(
      '{\n  "created_at": 1779500000,\n  "id": "golden-1"\n}\n',
    );
    // The tree of main holds main's files, not the fork's.
    expect(
      git(dir, 'ls-tree', '--name-only', 'main', 'messages/')
        .trim()
        .split('\n')
        .map((p) => p.slice(9)),
    ).toEqual([
      '000001-s-s1.json',
      '000002-u-u1.json',
      '000003-a-a1.json',
      '000004-t-t1.json',
      '000005-t-t2.json',
      '000006-a-a2.json',
      '000007-u-u2.json',
      '000008-a-a3.json',
      '000009-t-t3.json',
      '000010-t-t4.json',
      '000011-t-t5.json',
      '000012-a-a4.json',
    ]);
  });

  it('gives the same ids in two fresh roots, and a second sync writes nothing', async () => {
    const a = await goldenRepo();
    const b = await goldenRepo();
    expect(tipsOf(b.dir)).toEqual(tipsOf(a.dir));
    const before = git(a.dir, 'count-objects', '-v');
    const again = await a.mirror.sync(SID);
    expect(again).toMatchObject({ noop: true, commitsWritten: 0, branchesMoved: [] });
    expect(git(a.dir, 'count-objects', '-v')).toBe(before);
  });

  it('backfill of the finished DAG equals turn-by-turn live syncing', async () => {
    const dag = new MemoryDag();
    const root = tempDir();
    const mirror = createNodeMirror({ dag, root });
    await dag.createSession({ ...GOLDEN_SESSION, head: null });
    const nodes = goldenNodes();
    let turns = 0;
    for (const n of nodes) {
      // A dispatcher syncs when a turn ends, that is before the next user message is written.
      if (n.role === 'user' && turns++ > 0) await mirror.sync(SID);
      await dag.addNode(n);
    }
    await mirror.sync(SID);
    await dag.setHead(SID, GOLDEN_SESSION.head);
    await mirror.sync(SID);
    const dir = mirror.repoPath(SID);
    expect(tipsOf(dir)).toEqual(GOLDEN_TIPS);
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    // Each turn was committed once: HEAD's reflog has no rewritten tip.
    expect(git(dir, 'reflog', 'show', '--format=%H', 'main').trim().split('\n')).toEqual([
      GOLDEN_TIPS.main,
      GOLDEN_TURN1,
    ]);
  });

  it('follows a placeholder: the pending turn is committed once it is filled', async () => {
    const { dag, mirror, dir } = await goldenRepo();
    await dag.setHead(SID, 'a6');
    const switched = await mirror.sync(SID);
    expect(switched).toMatchObject({ head: 'main', commitsWritten: 0 });
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(readdirSync(join(dir, 'messages'))).toHaveLength(12);
    await dag.fillNode(SID, 'a6', 'Fixed all three.', { tokens: 7 });
    const filled = await mirror.sync(SID);
    expect(filled).toMatchObject({ commitsWritten: 1, branchesMoved: ['main'], nodesRead: 4 });
    expect(git(dir, 'log', '-1', '--format=%s', 'main').trim()).toBe('turn 3: Fix them');
    expect(git(dir, 'rev-parse', 'main~1').trim()).toBe(GOLDEN_TIPS.main);
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(readFileSync(join(dir, 'messages/000017-a-a6.json'), 'utf8')).toContain('"Fixed all three."');
    expect(git(dir, 'fsck', '--strict')).toBe('');
  });

  it('replays a commit from objects without touching the working tree', async () => {
    const { mirror, dir } = await goldenRepo();
    const status = git(dir, 'status', '--porcelain=v2', '--branch');
    const view = await mirror.read(SID, GOLDEN_TURN1);
    expect(view).toMatchObject({ branch: 'fork-u4', turn: 1, turns: 2, prev: null, next: GOLDEN_TIPS['fork-u4'] });
    expect(view.messages.map((m: DagNode) => m.id)).toEqual(['s1', 'u1', 'a1', 't1', 't2', 'a2']);
    expect(view.messages[1]).toEqual(goldenNodes()[1]);
    const onMain = await mirror.read(SID, GOLDEN_TIPS.main, { branch: 'main' });
    expect(onMain).toMatchObject({ branch: 'main', turn: 2, turns: 2, prev: GOLDEN_TURN1, next: null });
    expect(onMain.messages).toHaveLength(12);
    expect(git(dir, 'status', '--porcelain=v2', '--branch')).toBe(status);
    const log = await mirror.log(SID, { branch: 'retry-a4r' });
    expect(log.map((c) => [c.sha, c.turn, c.node, c.seq])).toEqual([
      [GOLDEN_TIPS['retry-a4r'], 2, 'a4r', 13],
      [GOLDEN_TURN1, 1, 'a2', 6],
    ]);
    expect((await mirror.branches(SID)).map((b) => [b.name, b.commit, b.turns, b.head])).toEqual([
      ['main', GOLDEN_TIPS.main, 2, false],
      ['fork-u2e', GOLDEN_TIPS['fork-u2e'], 2, false],
      ['fork-u4', GOLDEN_TIPS['fork-u4'], 2, true],
      ['retry-a4r', GOLDEN_TIPS['retry-a4r'], 2, false],
    ]);
    await expect(mirror.read(SID, 'f'.repeat(40))).rejects.toMatchObject({ code: 'COMMIT_NOT_FOUND' });
    await expect(mirror.read(SID, 'HEAD')).rejects.toMatchObject({ code: 'COMMIT_NOT_FOUND' });
    await expect(mirror.log(SID, { branch: 'nope' })).rejects.toMatchObject({ code: 'BRANCH_NOT_FOUND' });
  });

  it('lets native git check out, log and reflog the session, and re-syncs after', async () => {
    const { mirror, dir } = await goldenRepo();
    git(dir, 'checkout', '-q', 'retry-a4r');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(readdirSync(join(dir, 'messages'))).toContain('000013-a-a4r.json');
    expect(git(dir, 'reflog', '-1', '--format=%gs').trim()).toBe('checkout: moving from fork-u4 to retry-a4r');
    const back = await mirror.sync(SID);
    expect(back.head).toBe('fork-u4');
    expect(git(dir, 'symbolic-ref', '--short', 'HEAD').trim()).toBe('fork-u4');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(readdirSync(join(dir, 'messages'))).not.toContain('000013-a-a4r.json');
    expect((await mirror.verify(SID)).ok).toBe(true);
  });

  it('verify reports a moved branch and a missing repository', async () => {
    const { mirror, dir, dag } = await goldenRepo();
    expect(await mirror.verify(SID)).toEqual({ sessionId: SID, ok: true, differences: [] });
    git(dir, 'update-ref', 'refs/heads/retry-a4r', GOLDEN_TURN1);
    const report = await mirror.verify(SID);
    expect(report.ok).toBe(false);
    expect(report.differences.map((d) => [d.kind, d.branch])).toEqual([['branch-differs', 'retry-a4r']]);
    await mirror.sync(SID);
    expect((await mirror.verify(SID)).ok).toBe(true);
    await dag.createSession({ id: 'never-synced' });
    expect((await mirror.verify('never-synced')).differences.map((d) => d.kind)).toEqual(['missing-repo']);
    await expect(mirror.verify('no-such-session')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
  });

  it('keeps working after native git gc packs its objects and refs', async () => {
    const { dag, mirror, dir } = await goldenRepo();
    git(dir, 'gc', '-q', '--prune=now');
    expect(git(dir, 'count-objects', '-v')).toMatch(/^count: 0$/m);
    expect(git(dir, 'for-each-ref', '--format=%(refname)', 'refs/heads').trim().split('\n')).toHaveLength(4);
    expect((await mirror.verify(SID)).ok).toBe(true);
    const view = await mirror.read(SID, GOLDEN_TURN1);
    expect(view.messages).toHaveLength(6);
    await dag.setHead(SID, 'a6');
    await dag.fillNode(SID, 'a6', 'Fixed all three.', null);
    expect(await mirror.sync(SID)).toMatchObject({ head: 'main', branchesMoved: ['main'] });
    expect(git(dir, 'rev-parse', 'main~1').trim()).toBe(GOLDEN_TIPS.main);
    expect(git(dir, 'show', '--stat', '--format=%s', 'main').trim().split('\n')[0]).toBe('turn 3: Fix them');
    expect(git(dir, 'fsck', '--strict')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('survives a torn or lost cache: the state log is checked, and rebuilt from the DAG when it disagrees', async () => {
    const { dag, dir } = await goldenRepo();
    const log = join(dir, '.git/entity-git-state.jsonl');
    // A crash in the middle of an append leaves a torn line past the recorded length.
    appendFileSync(log, '{"k":["torn');
    const other = createNodeMirror({ dag, root: dirname(dir) });
    expect(await other.sync(SID)).toMatchObject({ noop: true, nodesRead: 4 });
    await dag.setHead(SID, 'a6');
    await dag.fillNode(SID, 'a6', 'Fixed.', null);
    expect(await other.sync(SID)).toMatchObject({ commitsWritten: 1, branchesMoved: ['main'] });
    // A log shorter than its header says is not trusted: the next sync reads the whole DAG.
    writeFileSync(log, '');
    const third = createNodeMirror({ dag, root: dirname(dir) });
    expect(await third.sync(SID)).toMatchObject({ commitsWritten: 0, nodesRead: 19, branchesMoved: [] });
    expect(git(dir, 'rev-parse', 'main~1').trim()).toBe(GOLDEN_TIPS.main);
    expect(await third.sync(SID)).toMatchObject({ noop: true });
    expect(git(dir, 'fsck', '--strict')).toBe('');
  });

  it("a fixed scenario of row edits between turns: the same ids as without them, and the meta ref's (equal in Chromium)", async () => {
    const { dag, mirror, dir } = await goldenRepo();
    await dag.updateSession(SID, { title: 'Renamed', metadata: { pinned: true }, model: 'another-model' });
    await dag.setHead(SID, 'a6');
    await dag.fillNode(SID, 'a6', 'Fixed all three.', { tokens: 7 });
    await mirror.sync(SID);
    expect(tipsOf(dir)).toEqual({ ...GOLDEN_TIPS, main: FILLED_MAIN });
    expect(git(dir, 'rev-parse', META_REF).trim()).toBe(RENAMED_META);
    expect(git(dir, 'cat-file', '-p', META_REF)).toBe(
      `tree ${git(dir, 'rev-parse', `${META_REF}^{tree}`).trim()}\nauthor entity-git <entity-git@localhost> 1779500000 +0000\ncommitter entity-git <entity-git@localhost> 1779500000 +0000\n\nsession: Renamed\n\nSession: golden-1\n`,
    );
    expect(JSON.parse(git(dir, 'show', `${META_REF}:session.json`))).toEqual({
      ...GOLDEN_SESSION,
      head: undefined,
      title: 'Renamed',
      metadata: { pinned: true },
      model: 'another-model',
    });
    expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
  });
});
