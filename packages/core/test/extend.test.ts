import { describe, expect, it } from 'vitest';
import { derive, type Derivation, type NodeShape } from '../src/model/derive.js';
import { extendDerivation } from '../src/model/extend.js';

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

/** The shape of a derivation as ids, to compare two derivations of the same nodes. */
const shape = (d: Derivation) => ({
  head: d.head,
  unknownHead: d.unknownHead,
  branches: d.branches.map((b) => ({
    name: b.name,
    leaf: b.leaf.id,
    complete: b.complete,
    turns: b.turns.map((t) => [t.index, t.nodes.map((n) => n.id)]),
  })),
});

type Op =
  | 'turn'
  | 'tools-only'
  | 'reply-only'
  | 'pending'
  | 'other-leaf'
  | 'fork'
  | 'retry'
  | 'root'
  | 'head-new'
  | 'head-old'
  | 'chained-tools';

class Grower {
  readonly nodes: NodeShape[] = [];
  readonly byId = new Map<string, NodeShape>();
  head: string | null = null;
  private seq = 0;
  constructor(private readonly r: () => number) {}

  add(role: NodeShape['role'], predecessor: string | null, caller: string | null = null, pending = false): NodeShape {
    this.seq += this.r() < 0.1 ? 2 : 1; // gaps are allowed
    const n: NodeShape = { id: `n${this.seq}`, seq: this.seq, role, predecessor, caller, pending };
    this.nodes.push(n);
    this.byId.set(n.id, n);
    return n;
  }

  leaves(): NodeShape[] {
    return derive(this.nodes, this.head).branches.map((b) => b.leaf);
  }

  headLeaf(): NodeShape | null {
    const d = derive(this.nodes, this.head);
    return d.branches.find((b) => b.name === d.head)?.leaf ?? null;
  }

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.r() * xs.length)]!;
  }

  /** A user turn with tool calls under `at`: returns the new nodes. */
  turn(at: string | null, opts: { tools?: number; chained?: boolean; reply?: boolean } = {}): NodeShape[] {
    const start = this.nodes.length;
    const u = this.add('user', at);
    const a = this.add('assistant', u.id);
    let prev = a.id;
    for (let i = 0; i < (opts.tools ?? 2); i++) prev = this.add('tool', opts.chained ? prev : a.id, a.id).id;
    if (opts.reply !== false) this.add('assistant', prev);
    return this.nodes.slice(start);
  }

  apply(op: Op): NodeShape[] {
    const leaf = this.headLeaf();
    const start = this.nodes.length;
    switch (op) {
      case 'turn':
        this.turn(leaf?.id ?? null);
        break;
      case 'chained-tools':
        this.turn(leaf?.id ?? null, { chained: true, tools: 3 });
        break;
      case 'tools-only': {
        if (!leaf) return this.apply('turn');
        this.add('tool', leaf.id, leaf.id);
        break;
      }
      case 'reply-only':
        if (leaf) this.add('assistant', leaf.id);
        break;
      case 'pending':
        if (leaf) this.add('assistant', leaf.id, null, true);
        break;
      case 'other-leaf':
        this.turn(this.pick(this.leaves()).id, { tools: 1 });
        break;
      case 'fork': {
        const users = this.nodes.filter((n) => n.role === 'user' && n.predecessor !== null);
        if (users.length) this.turn(this.pick(users).predecessor, { tools: 0 });
        break;
      }
      case 'retry': {
        const users = this.nodes.filter((n) => n.role === 'user');
        if (users.length) this.add('assistant', this.pick(users).id);
        break;
      }
      case 'root':
        this.turn(null, { tools: 0 });
        break;
      case 'head-new': {
        const added = this.turn(leaf?.id ?? null, { tools: 1 });
        this.head = this.pick(added).id;
        return added;
      }
      case 'head-old':
        this.head = this.r() < 0.3 ? null : this.pick(this.nodes).id;
        break;
    }
    return this.nodes.slice(start);
  }
}

describe('extending a derivation by new nodes', () => {
  it('gives exactly what deriving the whole DAG gives, whenever it applies, over random growth', () => {
    const ops: Op[] = [
      'turn',
      'turn',
      'turn',
      'chained-tools',
      'tools-only',
      'reply-only',
      'pending',
      'other-leaf',
      'fork',
      'retry',
      'root',
      'head-new',
      'head-old',
    ];
    const taken = new Map<Op, number>();
    const declined = new Map<Op, number>();
    for (let seed = 1; seed <= 60; seed++) {
      const g = new Grower(rng(seed));
      g.turn(null);
      let previous = derive(g.nodes, g.head);
      let headBefore = g.head;
      for (let step = 0; step < 40; step++) {
        const op = g.pick(ops);
        const added = g.apply(op);
        const full = derive(g.nodes, g.head);
        const ext = extendDerivation(previous, { added, byId: g.byId, head: g.head, headBefore });
        if (ext === null) {
          declined.set(op, (declined.get(op) ?? 0) + 1);
        } else {
          taken.set(op, (taken.get(op) ?? 0) + 1);
          expect(shape(ext.derivation)).toEqual(shape(full));
          // The turns before `keep` are the very same nodes.
          for (let k = 0; k < ext.keep; k++) expect(ext.after.turns[k]!.nodes).toEqual(ext.before.turns[k]!.nodes);
          if (ext.keep < ext.before.turns.length)
            expect(ext.after.turns[ext.keep]!.nodes).not.toEqual(ext.before.turns[ext.keep]!.nodes);
        }
        previous = full;
        headBefore = g.head;
      }
    }
    // The agent's ordinary turns take the fast path every time; forks and new roots never do.
    for (const op of ['turn', 'chained-tools', 'tools-only', 'reply-only', 'pending', 'head-new'] as const) {
      expect(declined.get(op) ?? 0, op).toBe(0);
      expect(taken.get(op) ?? 0, op).toBeGreaterThan(10);
    }
    for (const op of ['fork', 'root'] as const) expect(taken.get(op) ?? 0, op).toBe(0);
  });

  it('declines what it cannot see: a missing predecessor, an unknown head, seqs out of order', () => {
    const g = new Grower(rng(7));
    g.turn(null);
    const previous = derive(g.nodes, null);
    const leaf = previous.branches[0]!.leaf;
    const byId = new Map(g.byId);
    const orphan: NodeShape = { id: 'x', seq: 100, role: 'user', predecessor: 'nowhere', caller: null, pending: false };
    byId.set('x', orphan);
    expect(extendDerivation(previous, { added: [orphan], byId, head: null, headBefore: null })).toBeNull();
    const a: NodeShape = { id: 'a', seq: 101, role: 'user', predecessor: leaf.id, caller: null, pending: false };
    const b: NodeShape = { id: 'b', seq: 100, role: 'assistant', predecessor: 'a', caller: null, pending: false };
    byId.set('a', a).set('b', b);
    expect(extendDerivation(previous, { added: [a, b], byId, head: null, headBefore: null })).toBeNull();
    expect(extendDerivation(previous, { added: [a], byId, head: 'gone', headBefore: null })).toBeNull();
    expect(
      extendDerivation({ ...previous, unknownHead: 'gone' }, { added: [a], byId, head: 'gone', headBefore: 'gone' }),
    ).toBeNull();
    expect(extendDerivation(previous, { added: [a], byId, head: null, headBefore: null })).not.toBeNull();
  });
});
