import { createBrowserMirror, importRows, importSession } from '@entity-git/browser-fs';
import { MemoryDag, META_REF, type DagNode } from '@entity-git/core';
import { GOLDEN_SESSION, goldenNodes, writeGolden } from '@entity-git/test-utils';
import { Buffer } from 'buffer';
import git from 'isomorphic-git';
import { describe, expect, it } from 'vitest';
import { freshDag, GOLDEN_TIPS, GOLDEN_TURN1, SHARDED_TIPS, unique } from './helpers.js';

// isomorphic-git, called here directly, needs Node's Buffer: core installs it only before its own
// remote calls (push, fetch), so a page that calls isomorphic-git itself installs it first.
(globalThis as { Buffer?: unknown }).Buffer ??= Buffer;

const SID = GOLDEN_SESSION.id;
// node-fs, same DAG after `setHead('a6')` and filling the placeholder: main's third turn.
const FILLED_MAIN = '9283c4f2c088bb5a57b8195c890b61f523eb684b';
// node-fs, the same DAG with the row edited (golden.test.ts): the meta ref.
const RENAMED_META = 'a865109a8f74d2e0f84ad9b6527732b99c576abc';

const tips = async (mirror: ReturnType<typeof createBrowserMirror>) =>
  Object.fromEntries((await mirror.branches(SID)).map((b) => [b.name, b.commit]));

describe('golden session in Chromium', () => {
  it('gives exactly the commit ids node-fs gives, from the IndexedDB DAG', async () => {
    const dag = await freshDag();
    await writeGolden(dag);
    const mirror = createBrowserMirror({ dag, fsName: unique('fs') });
    const result = await mirror.sync(SID);
    expect(result).toMatchObject({ head: 'fork-u4', commitsWritten: 5, noop: false });
    expect(await tips(mirror)).toEqual(GOLDEN_TIPS);
    for (const branch of Object.keys(GOLDEN_TIPS))
      expect((await mirror.log(SID, { branch })).at(-1)!.sha).toBe(GOLDEN_TURN1);
    expect((await mirror.branches(SID)).find((b) => b.head)!.name).toBe('fork-u4');
    expect(await mirror.verify(SID)).toEqual({ sessionId: SID, ok: true, differences: [] });
    expect(await mirror.sync(SID)).toMatchObject({ noop: true, commitsWritten: 0, branchesMoved: [] });
    await mirror.storage.close();
  });

  it("a fixed scenario of row edits between turns gives node-fs's ids, and its meta ref", async () => {
    const dag = await freshDag();
    await writeGolden(dag);
    const mirror = createBrowserMirror({ dag, fsName: unique('fs') });
    await mirror.sync(SID);
    await dag.updateSession(SID, { title: 'Renamed', metadata: { pinned: true }, model: 'another-model' });
    await dag.setHead(SID, 'a6');
    await dag.fillNode(SID, 'a6', 'Fixed all three.', { tokens: 7 });
    await mirror.sync(SID);
    expect(await tips(mirror)).toEqual({ ...GOLDEN_TIPS, main: FILLED_MAIN });
    const fs = mirror.storage.lightningFs;
    expect(await git.resolveRef({ fs, dir: mirror.repoPath(SID), ref: META_REF })).toBe(RENAMED_META);
    expect(await mirror.verify(SID)).toEqual({ sessionId: SID, ok: true, differences: [] });
    await mirror.storage.close();
  });

  it('gives the sharded layout exactly the node-fs ids too, and replays it', async () => {
    const dag = await freshDag();
    await writeGolden(dag);
    const mirror = createBrowserMirror({ dag, fsName: unique('fs'), layout: 'sharded' });
    expect(await mirror.sync(SID)).toMatchObject({ head: 'fork-u4', commitsWritten: 5 });
    expect(await tips(mirror)).toEqual(SHARDED_TIPS);
    const view = await mirror.read(SID, SHARDED_TIPS.main, { branch: 'main' });
    expect(view.messages.map((m) => m.id)).toEqual(
      goldenNodes()
        .filter((n) => view.messages.some((m) => m.id === n.id))
        .map((n) => n.id),
    );
    expect(view.messages.length).toBeGreaterThan(0);
    expect(await mirror.verify(SID)).toEqual({ sessionId: SID, ok: true, differences: [] });
    await mirror.storage.close();
  });

  it('keeps objects and refs only, and isomorphic-git reads the repository', async () => {
    const dag = await freshDag();
    await writeGolden(dag);
    const mirror = createBrowserMirror({ dag, fsName: unique('fs') });
    await mirror.sync(SID);
    const dir = mirror.repoPath(SID);
    expect(dir).toBe('/sessions/golden-1');
    expect((await mirror.storage.fs.readdir(dir)).sort()).toEqual(['.git']);
    const fs = mirror.storage.lightningFs;
    for (const [branch, oid] of Object.entries(GOLDEN_TIPS)) {
      expect(await git.resolveRef({ fs, dir, ref: branch })).toBe(oid);
      expect((await git.log({ fs, dir, ref: branch })).map((c) => c.oid).at(-1)).toBe(GOLDEN_TURN1);
    }
    expect(await git.currentBranch({ fs, dir })).toBe('fork-u4');
    const { blob } = await git.readBlob({ fs, dir, oid: GOLDEN_TIPS.main, filepath: 'messages/000002-u-u1.json' });
    expect(new TextDecoder().decode(blob)).toBe(
      '{\n  "caller": null,\n  "content": "列出 src 目录中的文件 🙂\\n请简短回答",\n  "created_at": 1779500003,\n  "id": "u1",\n' +
        '  "metadata": null,\n  "predecessor": "s1",\n  "role": "user",\n  "seq": 2,\n  "session_id": "golden-1"\n}\n',
    );
    const reflog = (await mirror.storage.fs.readFile(`${dir}/.git/logs/refs/heads/main`, 'utf8')) as string;
    expect(
      reflog
        .trim()
        .split('\n')
        .map((l) => l.split(' ')[1]),
    ).toEqual([GOLDEN_TIPS.main]);
    await mirror.storage.close();
  });

  it('replays a commit from objects: turn N of M, prev/next, the messages as they stood', async () => {
    const dag = await freshDag();
    await writeGolden(dag);
    const mirror = createBrowserMirror({ dag, fsName: unique('fs') });
    await mirror.sync(SID);
    const view = await mirror.read(SID, GOLDEN_TURN1);
    expect(view).toMatchObject({ branch: 'fork-u4', turn: 1, turns: 2, prev: null, next: GOLDEN_TIPS['fork-u4'] });
    expect(view.messages.map((m: DagNode) => m.id)).toEqual(['s1', 'u1', 'a1', 't1', 't2', 'a2']);
    expect(view.messages[1]).toEqual(goldenNodes()[1]);
    expect(await mirror.read(SID, GOLDEN_TIPS.main, { branch: 'main' })).toMatchObject({
      turn: 2,
      turns: 2,
      prev: GOLDEN_TURN1,
      next: null,
    });
    await expect(mirror.read(SID, 'f'.repeat(40))).rejects.toMatchObject({ code: 'COMMIT_NOT_FOUND' });
    await mirror.storage.close();
  });

  it('live turn-by-turn syncing equals the backfill, each turn committed once', async () => {
    const dag = await freshDag();
    const mirror = createBrowserMirror({ dag, fsName: unique('fs') });
    await dag.createSession({ ...GOLDEN_SESSION, head: null });
    let turns = 0;
    for (const n of goldenNodes()) {
      if (n.role === 'user' && turns++ > 0) await mirror.sync(SID);
      await dag.addNode(n);
    }
    await mirror.sync(SID);
    await dag.setHead(SID, GOLDEN_SESSION.head);
    await mirror.sync(SID);
    expect(await tips(mirror)).toEqual(GOLDEN_TIPS);
    const reflog = (await mirror.storage.fs.readFile(
      `${mirror.repoPath(SID)}/.git/logs/refs/heads/main`,
      'utf8',
    )) as string;
    expect(
      reflog
        .trim()
        .split('\n')
        .map((l) => l.split(' ')[1]),
    ).toEqual([GOLDEN_TURN1, GOLDEN_TIPS.main]);
    expect((await mirror.verify(SID)).ok).toBe(true);
    await mirror.storage.close();
  });
});

describe('importing a session from another DagSource', () => {
  it('copies the rows of a MemoryDag exactly; the browser mirror rebuilds the Node ids', async () => {
    const server = new MemoryDag();
    await writeGolden(server);
    const dag = await freshDag();
    const progress: number[] = [];
    const result = await importSession({
      from: server,
      into: dag,
      sessionId: SID,
      batchSize: 7,
      onProgress: (p) => progress.push(p.nodes),
    });
    expect(result).toEqual({ sessionId: SID, created: true, added: 19, updated: 0, unchanged: 0, lastSeq: 19 });
    expect(progress).toEqual([7, 14, 19]);
    expect(await dag.getSession(SID)).toEqual(await server.getSession(SID));
    const copied: DagNode[] = [];
    for await (const n of dag.nodesAfter(SID)) copied.push(n);
    expect(copied).toEqual(goldenNodes());
    const mirror = createBrowserMirror({ dag, fsName: unique('fs') });
    expect((await mirror.verify(SID)).differences.map((d) => d.kind)).toEqual(['missing-repo']);
    await mirror.sync(SID);
    expect(await tips(mirror)).toEqual(GOLDEN_TIPS);
    await mirror.storage.close();
  });

  it('takes rows received as JSON, and a re-import brings a filled placeholder and the new head', async () => {
    const server = new MemoryDag();
    await writeGolden(server);
    // What an actions API sends: the session row and its nodes, as JSON.
    const wire = async () => {
      const nodes: DagNode[] = [];
      for await (const n of server.nodesAfter(SID)) nodes.push(n);
      return JSON.parse(JSON.stringify({ session: await server.getSession(SID), nodes })) as {
        session: typeof GOLDEN_SESSION;
        nodes: DagNode[];
      };
    };
    const dag = await freshDag();
    const first = await wire();
    expect(await importRows({ into: dag, ...first })).toMatchObject({ created: true, added: 19 });
    const mirror = createBrowserMirror({ dag, fsName: unique('fs') });
    await mirror.sync(SID);
    expect(await tips(mirror)).toEqual(GOLDEN_TIPS);

    await server.setHead(SID, 'a6');
    await server.fillNode(SID, 'a6', 'Fixed all three.', { tokens: 7 });
    expect(await importRows({ into: dag, ...(await wire()) })).toEqual({
      sessionId: SID,
      created: false,
      added: 0,
      updated: 1,
      unchanged: 18,
      lastSeq: 19,
    });
    expect(await dag.getHead(SID)).toBe('a6');
    expect(await mirror.sync(SID)).toMatchObject({ head: 'main', commitsWritten: 1, branchesMoved: ['main'] });
    expect(await tips(mirror)).toEqual({ ...GOLDEN_TIPS, main: FILLED_MAIN });
    expect((await mirror.verify(SID)).ok).toBe(true);
    await mirror.storage.close();
  });

  it('refuses rows that diverge from what the browser has, and rows of another session', async () => {
    const server = new MemoryDag();
    await writeGolden(server);
    const dag = await freshDag();
    await dag.createSession({ ...GOLDEN_SESSION, head: null });
    await dag.appendNode({ id: 'local', session_id: SID, role: 'user', content: 'typed offline' });
    await expect(importSession({ from: server, into: dag, sessionId: SID })).rejects.toMatchObject({
      code: 'DAG_DUPLICATE_SEQ',
    });
    await expect(importSession({ from: server, into: dag, sessionId: 'nope' })).rejects.toMatchObject({
      code: 'SESSION_NOT_FOUND',
    });
    const session = (await server.getSession(SID))!;
    await expect(
      importRows({ into: dag, session: { ...session, id: 'other' }, nodes: goldenNodes() }),
    ).rejects.toMatchObject({ code: 'INVALID_NODE' });
    await dag.deleteSession(SID);
    expect(await importSession({ from: server, into: dag, sessionId: SID })).toMatchObject({
      created: true,
      added: 19,
    });
  });
});
