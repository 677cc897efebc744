import { MemoryDag, META_REF, reconcile, type DagNode, type Session } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from './helpers.js';

/** A small deterministic generator (mulberry32), so a failing seed can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const refsOf = (dir: string) =>
  git(dir, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/entity-git').trim();

/**
 * A session whose DAG grows by random turns, retries and forks, and whose row is edited in
 * between (title, project joined and left, metadata, model, agent, head) — the edits an
 * application makes during a conversation.
 */
async function randomSession(seed: number) {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const id = `row-${seed}`;
  const dag = new MemoryDag();
  const project = await dag.createProject({ name: 'P', workdir: tempDir() });
  await dag.createSession({ id, created_at: 1779500000 });
  const nodes: DagNode[] = [];
  let seq = 0;
  let tip: string | null = null;
  const add = async (role: DagNode['role'], predecessor: string | null, extra: Partial<DagNode> = {}) => {
    seq += 1;
    const n: DagNode = {
      id: `n${seq}`,
      session_id: id,
      seq,
      role,
      content: `${role} ${seq}`,
      predecessor,
      caller: null,
      created_at: 1779500000 + seq,
      metadata: null,
      ...extra,
    };
    await dag.addNode(n);
    nodes.push(n);
    return n;
  };
  const edits: Array<() => Promise<string>> = [
    async () => (await dag.updateSession(id, { title: `title ${Math.floor(r() * 1000)}` }), 'title'),
    async () => (await dag.addSessionToProject(project.id, id), 'project'),
    async () => (await dag.updateSession(id, { project_id: null }), 'unproject'),
    async () => (await dag.updateSession(id, { metadata: { k: Math.floor(r() * 100) } }), 'metadata'),
    async () => (
      await dag.updateSession(id, { model: pick(['m-1', 'm-2', null]), agent_id: pick(['a-1', 'a-2', null]) }), 'model'
    ),
    async () => (await dag.setHead(id, nodes.length > 0 ? pick(nodes).id : null), 'head'),
  ];
  const step = async (): Promise<string> => {
    const x = r();
    if (x < 0.35) return pick(edits)();
    if (x < 0.8 || nodes.length === 0) {
      const u = await add('user', tip);
      const a = await add('assistant', u.id);
      if (r() < 0.5) await add('tool', a.id, { caller: a.id, metadata: { tool: 'read' } });
      tip = (await add('assistant', a.id)).id;
      return 'turn';
    }
    if (x < 0.9) {
      const users = nodes.filter((n) => n.role === 'user');
      tip = (await add('assistant', pick(users).id)).id;
      return 'retry';
    }
    const assistants = nodes.filter((n) => n.role === 'assistant');
    const u = await add('user', pick(assistants).id);
    tip = (await add('assistant', u.id)).id;
    return 'fork';
  };
  return { id, dag, step };
}

describe('commit ids are a pure function of the DAG when the session row changes', () => {
  it('random turns interleaved with row edits, synced live step by step, equal a one-shot backfill of the final DAG, branch by branch', async () => {
    const seen = new Set<string>();
    for (let seed = 1; seed <= 6; seed++) {
      const s = await randomSession(seed * 7919);
      const live = createNodeMirror({ dag: s.dag, root: tempDir() });
      for (let i = 0; i < 24; i++) {
        seen.add(await s.step());
        // Not every step is followed by a sync: edits also pile up between syncs.
        if (i % 3 !== 1) await live.sync(s.id);
      }
      await live.sync(s.id);
      const backfill = createNodeMirror({ dag: s.dag, root: tempDir() });
      await backfill.sync(s.id);
      const a = live.repoPath(s.id);
      const b = backfill.repoPath(s.id);
      expect(refsOf(a), `seed ${seed}`).toBe(refsOf(b));
      expect(refsOf(a)).toContain('refs/heads/main ');
      expect(git(a, 'symbolic-ref', 'HEAD')).toBe(git(b, 'symbolic-ref', 'HEAD'));
      // The row as it is now, readable with plain git; meta.json holds the immutable fields only.
      const row = (await s.dag.getSession(s.id)) as Session;
      const { head: _head, ...record } = row;
      expect(JSON.parse(git(a, 'show', `${META_REF}:session.json`))).toEqual(record);
      expect(JSON.parse(git(a, 'show', 'HEAD:meta.json'))).toEqual({ id: s.id, created_at: 1779500000 });
      expect(git(a, 'status', '--porcelain')).toBe('');
      expect(git(a, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect((await live.verify(s.id)).differences).toEqual([]);
    }
    // The generator made every kind of change at least once across the seeds.
    expect([...seen].sort()).toEqual([
      'fork',
      'head',
      'metadata',
      'model',
      'project',
      'retry',
      'title',
      'turn',
      'unproject',
    ]);
  }, 240_000);

  it('verify reports commit ids that differ from a fresh backfill of the same DAG, and reconcile rewrites them', async () => {
    const dag = new MemoryDag();
    await writeGolden(dag);
    const root = tempDir();
    // The same messages, trailers and turns under other ids: written by a mirror of another config.
    await createNodeMirror({ dag, root, identity: { name: 'someone else', email: 'else@example.com' } }).sync(
      GOLDEN_SESSION.id,
    );
    const mirror = createNodeMirror({ dag, root });
    const reference = createNodeMirror({ dag, root: tempDir() });
    await reference.sync(GOLDEN_SESSION.id);
    const report = await mirror.verify(GOLDEN_SESSION.id);
    expect(report.ok).toBe(false);
    expect(report.differences.filter((d) => d.kind === 'ids-differ').map((d) => [d.branch, d.expected])).toEqual(
      git(
        reference.repoPath(GOLDEN_SESSION.id),
        'for-each-ref',
        '--format=%(refname:short) %(objectname)',
        'refs/heads',
      )
        .trim()
        .split('\n')
        .map((l) => l.split(' ')),
    );
    expect((await reconcile({ dag, mirror })).entries.map((e) => e.action)).toEqual(['repaired']);
    expect(refsOf(mirror.repoPath(GOLDEN_SESSION.id))).toBe(refsOf(reference.repoPath(GOLDEN_SESSION.id)));
    expect(await mirror.verify(GOLDEN_SESSION.id)).toMatchObject({ ok: true, differences: [] });
  });
});
