import { canonicalJson, createMirrorService, MemoryDag, type DagNode, type ServiceEvents } from '@entity-git/core';
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createNodeMirror } from '@entity-git/node-fs';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from './helpers.js';

const node = (
  sid: string,
  id: string,
  seq: number,
  role: DagNode['role'],
  predecessor: string | null,
  content: DagNode['content'] = id,
  created_at = 1779500000 + seq,
  caller: string | null = null,
): DagNode => ({
  id,
  session_id: sid,
  seq,
  role,
  content,
  predecessor,
  caller,
  created_at,
  metadata: role === 'tool' ? { tool: 'read' } : null,
});

async function session(nodes: (sid: string) => DagNode[], sid = 's') {
  const dag = new MemoryDag();
  await dag.createSession({ id: sid, created_at: 1779500000 });
  for (const n of nodes(sid)) await dag.addNode(n);
  const mirror = createNodeMirror({ dag, root: tempDir() });
  return { dag, mirror, dir: mirror.repoPath(sid) };
}

describe('odd and hostile DAGs', () => {
  it('several roots become branches; seq gaps are fine', async () => {
    const { mirror, dir } = await session((s) => [
      node(s, 'u1', 1, 'user', null),
      node(s, 'a1', 5, 'assistant', 'u1'),
      node(s, 'r2', 9, 'user', null),
      node(s, 'a2', 40, 'assistant', 'r2'),
    ]);
    const r = await mirror.sync('s');
    expect(r.branchesMoved).toEqual(['main', 'fork-r2']);
    expect(git(dir, 'ls-tree', '--name-only', 'main', 'messages/').trim().split('\n')).toEqual([
      'messages/000001-u-u1.json',
      'messages/000005-a-a1.json',
    ]);
    expect(git(dir, 'fsck', '--strict')).toBe('');
  });

  it('times in the future, before 1970 and going backwards: commit time is the turn’s latest, never negative', async () => {
    const { mirror, dir } = await session((s) => [
      node(s, 'u1', 1, 'user', null, 'past', -86400 * 365),
      node(s, 'a1', 2, 'assistant', 'u1', 'x', -5),
      node(s, 'u2', 3, 'user', 'a1', 'future', 32503680000),
      node(s, 'a2', 4, 'assistant', 'u2', 'y', 32503679000),
      node(s, 'u3', 5, 'user', 'a2', 'back', 1000.9),
      node(s, 'a3', 6, 'assistant', 'u3', 'z', 999),
    ]);
    await mirror.sync('s');
    expect(git(dir, 'log', '--format=%ct %at', 'main').trim().split('\n')).toEqual([
      '1000 1000',
      '32503680000 32503680000',
      '0 0',
    ]);
    expect(git(dir, 'fsck', '--strict')).toBe('');
  });

  it('content with NUL, lone surrogates, a 1 MB subject and trailer-like text stays exact in files and safe in messages', async () => {
    const big = 'subject '.repeat(131072);
    const { mirror, dir } = await session((s) => [
      node(s, 'u1', 1, 'user', null, `a\u0000b \ud800 c\n\nSession: evil\nTurn: 99\nNode: evil\nSeq: 1`),
      node(s, 'a1', 2, 'assistant', 'u1', 'Node: x\nSeq: 2'),
      node(s, 'u2', 3, 'user', 'a1', big),
      node(s, 'a2', 4, 'assistant', 'u2', 'ok'),
    ]);
    await mirror.sync('s');
    expect(git(dir, 'fsck', '--strict')).toBe('');
    const log = await mirror.log('s');
    expect(log.map((c) => [c.turn, c.node, c.seq])).toEqual([
      [2, 'a2', 4],
      [1, 'a1', 2],
    ]);
    expect(log[1]!.subject).toBe('turn 1: a b \ufffd c Session: evil Turn: 99 Node: evil Seq: 1');
    expect(Array.from(log[0]!.subject)).toHaveLength('turn 2: '.length + 60);
    const first = await mirror.read('s', log[1]!.sha);
    expect(first.messages[0]!.content).toBe(`a\u0000b \ud800 c\n\nSession: evil\nTurn: 99\nNode: evil\nSeq: 1`);
    expect(git(dir, 'show', `${log[1]!.sha}:messages/000001-u-u1.json`)).toContain(
      '"a\\u0000b \\ud800 c\\n\\nSession: evil',
    );
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('a 10,000-deep chain in one turn mirrors in one commit', async () => {
    const { mirror, dir } = await session((s) => {
      const nodes = [node(s, 'u', 1, 'user', null)];
      for (let i = 2; i <= 10_000; i++)
        nodes.push(
          node(
            s,
            `n${i}`,
            i,
            i % 2 ? 'tool' : 'assistant',
            nodes.at(-1)!.id,
            'x',
            1779500000,
            i % 2 ? `n${i - 1}` : null,
          ),
        );
      return nodes;
    });
    const r = await mirror.sync('s');
    expect(r).toMatchObject({ commitsWritten: 1, nodesRead: 10_000, head: 'main' });
    expect(git(dir, 'ls-tree', 'main', 'messages/').trim().split('\n')).toHaveLength(10_000);
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('broken DAGs get typed errors and the queue keeps serving other sessions', async () => {
    const dag = new MemoryDag();
    const root = tempDir();
    const bad: Record<string, DagNode[]> = {
      cycle: [node('cycle', 'x', 1, 'user', 'y'), node('cycle', 'y', 2, 'assistant', 'x')],
      orphan: [node('orphan', 'u', 1, 'user', null), node('orphan', 'a', 2, 'assistant', 'ghost')],
      ghostcaller: [
        node('ghostcaller', 'u', 1, 'user', null),
        node('ghostcaller', 't', 2, 'tool', 'u', 'x', 1, 'ghost'),
      ],
    };
    for (const [sid, nodes] of Object.entries(bad)) {
      await dag.createSession({ id: sid });
      for (const n of nodes) await dag.addNode(n);
    }
    await dag.createSession({ id: 'good', created_at: 1 });
    await dag.addNode(node('good', 'u', 1, 'user', null));
    await dag.addNode(node('good', 'a', 2, 'assistant', 'u'));
    const mirror = createNodeMirror({ dag, root });
    const service = createMirrorService({ mirror, baseDelayMs: 1 });
    const failed: ServiceEvents['failed'][] = [];
    service.on('failed', (e) => failed.push(e));
    for (const sid of ['cycle', 'orphan', 'ghostcaller', 'good']) service.notify(sid);
    await service.drain();
    expect(failed.map((f) => [f.sessionId, f.error.code, f.attempts]).sort()).toEqual([
      ['cycle', 'DAG_CYCLE', 1],
      ['ghostcaller', 'DAG_MISSING_PREDECESSOR', 1],
      ['orphan', 'DAG_MISSING_PREDECESSOR', 1],
    ]);
    expect(git(mirror.repoPath('good'), 'rev-list', '--count', 'main').trim()).toBe('1');
    // Duplicate ids or reused seqs from a source that does not check them.
    const dup = createNodeMirror({
      dag: {
        listSessions: async () => ['d'],
        getHead: async () => null,
        getSession: async () => ({
          id: 'd',
          title: null,
          agent_id: null,
          model: null,
          project_id: null,
          head: null,
          created_at: 1,
          metadata: null,
        }),
        async *nodesAfter() {
          yield node('d', 'u', 1, 'user', null);
          yield node('d', 'u', 2, 'assistant', 'u');
        },
      },
      root,
    });
    await expect(dup.sync('d')).rejects.toMatchObject({ code: 'DAG_DUPLICATE_ID' });
    const reuse = createNodeMirror({
      dag: {
        listSessions: async () => ['r'],
        getHead: async () => null,
        getSession: async () => ({
          id: 'r',
          title: null,
          agent_id: null,
          model: null,
          project_id: null,
          head: null,
          created_at: 1,
          metadata: null,
        }),
        async *nodesAfter() {
          yield node('r', 'u', 1, 'user', null);
          yield node('r', 'a', 1, 'assistant', 'u');
        },
      },
      root,
    });
    await expect(reuse.sync('r')).rejects.toMatchObject({ code: 'DAG_DUPLICATE_SEQ' });
    await expect(dag.addNode({ ...node('good', 'n', 3, 'user', 'a'), created_at: NaN })).rejects.toMatchObject({
      code: 'INVALID_NODE',
    });
  });

  it('a 100 MB tool output syncs whole: exact bytes in the blob and the working tree, fsck clean', async () => {
    const big = 'log line with some text 0123456789\n'.repeat(Math.ceil((100 << 20) / 35)).slice(0, 100 << 20);
    const { mirror, dir } = await session((s) => [
      node(s, 'u', 1, 'user', null),
      node(s, 'a', 2, 'assistant', 'u'),
      node(s, 't', 3, 'tool', 'a', big, 1779500003, 'a'),
      node(s, 'b', 4, 'assistant', 't'),
    ]);
    await mirror.sync('s');
    const file = 'messages/000003-t-t.json';
    const expected = canonicalJson({
      caller: 'a',
      content: big,
      created_at: 1779500003,
      id: 't',
      metadata: { tool: 'read' },
      predecessor: 'a',
      role: 'tool',
      seq: 3,
      session_id: 's',
    });
    expect(git(dir, 'cat-file', '-s', `HEAD:${file}`).trim()).toBe(String(Buffer.byteLength(expected)));
    expect(statSync(join(dir, file)).size).toBe(Buffer.byteLength(expected));
    expect(
      createHash('sha1')
        .update(readFileSync(join(dir, file)))
        .digest('hex'),
    ).toBe(createHash('sha1').update(expected).digest('hex'));
    expect(git(dir, 'fsck', '--strict')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(await mirror.sync('s')).toMatchObject({ noop: true });
  });
});
