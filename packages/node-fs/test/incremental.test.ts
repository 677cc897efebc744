import { MemoryDag, type DagNode, type Layout } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from './helpers.js';

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

const refsOf = (dir: string) => git(dir, 'for-each-ref', '--format=%(refname) %(objectname)').trim();

/** A session grown by random agent steps, in a MemoryDag. */
class Session {
  readonly dag = new MemoryDag();
  private seq = 0;
  private readonly nodes: DagNode[] = [];
  private tip: string | null = null;
  private pending: string | null = null;
  constructor(
    readonly id: string,
    private readonly r: () => number,
  ) {}

  async open(): Promise<void> {
    await this.dag.createSession({ id: this.id, title: 'Random', created_at: 1779500000 });
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.r() * xs.length)]!;
  }

  private async add(role: DagNode['role'], predecessor: string | null, extra: Partial<DagNode> = {}): Promise<DagNode> {
    this.seq += 1;
    const n: DagNode = {
      id: `n${this.seq}`,
      session_id: this.id,
      seq: this.seq,
      role,
      content: `${role} ${this.seq}`,
      predecessor,
      caller: null,
      created_at: 1779500000 + this.seq,
      metadata: null,
      ...extra,
    };
    await this.dag.addNode(n);
    this.nodes.push(n);
    return n;
  }

  /** One random step (or the one named); returns its name. */
  async step(only?: number): Promise<string> {
    const x = only ?? this.r();
    if (this.pending !== null) {
      await this.dag.fillNode(this.id, this.pending, 'filled', null);
      this.pending = null;
    }
    if (x < 0.35) {
      // A whole turn on the current tip: user, assistant calling tools, results, reply.
      const u = await this.add('user', this.tip);
      const a = await this.add('assistant', u.id);
      let prev = a.id;
      for (let i = 0; i < 1 + Math.floor(this.r() * 3); i++)
        prev = (await this.add('tool', this.r() < 0.5 ? a.id : prev, { caller: a.id, metadata: { tool: 'read' } })).id;
      this.tip = (await this.add('assistant', prev)).id;
      return 'turn';
    }
    if (x < 0.5) {
      // Half a turn now, the rest at the next step.
      const u = await this.add('user', this.tip);
      this.tip = (await this.add('assistant', u.id)).id;
      return 'half';
    }
    if (x < 0.65) {
      this.tip = (await this.add('assistant', this.tip, { metadata: { tokens: 5 } })).id;
      return 'more';
    }
    if (x < 0.7) {
      // A placeholder, synced while pending, filled at the next step.
      const p = await this.add('assistant', this.tip, { content: '', metadata: { pending: true } });
      this.pending = p.id;
      this.tip = p.id;
      return 'pending';
    }
    if (x < 0.8) {
      const users = this.nodes.filter((n) => n.role === 'user');
      if (users.length === 0) return this.step();
      this.tip = (await this.add('assistant', this.pick(users).id)).id;
      return 'retry';
    }
    if (x < 0.88) {
      const assistants = this.nodes.filter((n) => n.role === 'assistant');
      if (assistants.length === 0) return this.step();
      const u = await this.add('user', this.pick(assistants).id);
      this.tip = (await this.add('assistant', u.id)).id;
      return 'fork';
    }
    if (x < 0.95) {
      const n = this.pick(this.nodes);
      await this.dag.setHead(this.id, n.id);
      return 'head';
    }
    await this.dag.setHead(this.id, null);
    return 'head';
  }
}

describe('a mirror that carries on from its last sync', () => {
  for (const layout of ['flat', 'sharded'] as Layout[]) {
    it(`gives, step by step, exactly the refs a fresh backfill gives (${layout})`, async () => {
      const counts = { extended: 0, full: 0 };
      for (let seed = 1; seed <= 4; seed++) {
        const s = new Session(`s${seed}`, rng(seed * 977));
        await s.open();
        const live = createNodeMirror({ dag: s.dag, root: tempDir(), layout });
        // Two whole turns first: a branch whose only turn becomes pending keeps its ref (refs are
        // never deleted), which a fresh backfill would not have made.
        await s.step(0);
        await s.step(0);
        for (let step = 0; step < 25; step++) {
          await s.step();
          const result = await live.sync(s.id);
          counts[result.derivation]++;
          const reference = createNodeMirror({ dag: s.dag, root: tempDir(), layout });
          const full = await reference.sync(s.id);
          expect(full.derivation).toBe('full');
          expect(refsOf(live.repoPath(s.id))).toBe(refsOf(reference.repoPath(s.id)));
          expect(git(live.repoPath(s.id), 'symbolic-ref', 'HEAD')).toBe(
            git(reference.repoPath(s.id), 'symbolic-ref', 'HEAD'),
          );
          expect(git(live.repoPath(s.id), 'status', '--porcelain')).toBe('');
          expect(git(live.repoPath(s.id), 'ls-files', '-s')).toBe(git(reference.repoPath(s.id), 'ls-files', '-s'));
        }
        expect(git(live.repoPath(s.id), 'fsck', '--strict', '--no-dangling')).toBe('');
        expect(await live.verify(s.id)).toMatchObject({ ok: true });
      }
      // The fast path carries most turns; the others (forks, edits, head moves) are derived whole.
      expect(counts.extended).toBeGreaterThan(counts.full);
      expect(counts.full).toBeGreaterThan(4);
    }, 120_000);
  }

  it('adds a message that joins the last committed turn to the index and the working tree', async () => {
    const s = new Session('joined', rng(9));
    await s.open();
    const live = createNodeMirror({ dag: s.dag, root: tempDir() });
    await s.step(0.4); // user + assistant: a complete turn
    await live.sync(s.id);
    await s.step(0.6); // one more assistant message in that turn
    expect(await live.sync(s.id)).toMatchObject({ derivation: 'extended', commitsWritten: 1, branchesMoved: ['main'] });
    const dir = live.repoPath(s.id);
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(git(dir, 'ls-files').trim().split('\n')).toEqual([
      'messages/000001-u-n1.json',
      'messages/000002-a-n2.json',
      'messages/000003-a-n3.json',
      'meta.json',
    ]);
    expect(git(dir, 'rev-list', '--count', 'HEAD').trim()).toBe('1');
  });

  it('is not fooled by another writer: a sync by a second mirror makes the first derive again', async () => {
    const s = new Session('shared', rng(5));
    await s.open();
    const root = tempDir();
    const a = createNodeMirror({ dag: s.dag, root });
    const b = createNodeMirror({ dag: s.dag, root });
    for (let i = 0; i < 3; i++) await s.step(0);
    await a.sync(s.id);
    await s.step(0);
    expect((await a.sync(s.id)).derivation).toBe('extended');
    await s.step(0);
    await b.sync(s.id);
    await s.step(0);
    // a's plan belongs to a state the repository has moved past.
    expect((await a.sync(s.id)).derivation).toBe('full');
    const reference = createNodeMirror({ dag: s.dag, root: tempDir() });
    await reference.sync(s.id);
    expect(refsOf(a.repoPath(s.id))).toBe(refsOf(reference.repoPath(s.id)));
    expect(git(a.repoPath(s.id), 'status', '--porcelain')).toBe('');
  });
});
