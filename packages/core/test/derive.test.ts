import { derive, type NodeShape } from '@entity-git/core';
import { goldenNodes, GOLDEN_SESSION } from '../../test-utils/src/golden-dag.js';
import { describe, expect, it } from 'vitest';

const shape = (
  id: string,
  seq: number,
  role: NodeShape['role'],
  predecessor: string | null,
  caller: string | null = null,
  pending = false,
): NodeShape => ({ id, seq, role, predecessor, caller, pending });
const golden = () =>
  goldenNodes().map((n) =>
    shape(n.id, n.seq, n.role, n.predecessor, n.caller, (n.metadata as { pending?: boolean } | null)?.pending === true),
  );
const summary = (d: ReturnType<typeof derive>) =>
  d.branches.map((b) => [b.name, b.complete, b.turns.map((t) => t.nodes.map((n) => n.id).join(' '))]);

describe('derive', () => {
  it('turns the golden DAG into its branches, turns and HEAD', () => {
    const d = derive(golden(), GOLDEN_SESSION.head);
    expect(summary(d)).toEqual([
      ['main', 2, ['s1 u1 a1 t1 t2 a2', 'u2 a3 t3 t4 t5 a4', 'u3 a6']],
      ['retry-a4r', 2, ['s1 u1 a1 t1 t2 a2', 'u2 a3 t3 t4 t5 a4r']],
      ['fork-u2e', 2, ['s1 u1 a1 t1 t2 a2', 'u2e a5']],
      ['fork-u4', 2, ['s1 u1 a1 t1 t2 a2', 'u4 a7']],
    ]);
    expect(d.head).toBe('fork-u4');
    expect(derive(golden(), null).head).toBe('fork-u4');
    expect(derive(golden(), 'u2').head).toBe('main');
    expect(derive(golden(), 't4').head).toBe('main');
    expect(derive(golden(), 'a4r').head).toBe('retry-a4r');
    expect(derive(golden(), 'nope')).toMatchObject({ head: 'fork-u4', unknownHead: 'nope' });
  });

  it('keeps parallel tool results on their caller’s path, mid-turn too', () => {
    const mid = [
      shape('u', 1, 'user', null),
      shape('a', 2, 'assistant', 'u'),
      shape('t1', 3, 'tool', 'a', 'a'),
      shape('t2', 4, 'tool', 'a', 'a'),
    ];
    expect(summary(derive(mid, null))).toEqual([['main', 1, ['u a t1 t2']]]);
    const done = [...mid, shape('a2', 5, 'assistant', 't2')];
    expect(summary(derive(done, null))).toEqual([['main', 1, ['u a t1 t2 a2']]]);
  });

  it('names retries and forks after the last fork the path left main at', () => {
    const nodes = [
      shape('u1', 1, 'user', null),
      shape('a1', 2, 'assistant', 'u1'),
      shape('a1b', 3, 'assistant', 'u1'),
      shape('u2', 4, 'user', 'a1b'),
      shape('a2', 5, 'assistant', 'u2'),
      shape('u2b', 6, 'user', 'a1b'),
      shape('r2', 7, 'user', null),
    ];
    const d = derive(nodes, null);
    expect(d.branches.map((b) => [b.name, b.leaf.id])).toEqual([
      ['main', 'a1'],
      ['retry-a1b', 'a2'],
      ['fork-u2b', 'u2b'],
      ['fork-r2', 'r2'],
    ]);
    expect(d.head).toBe('fork-r2');
  });

  it('holds back a pending last turn, and only the last', () => {
    const nodes = [shape('u1', 1, 'user', null), shape('a1', 2, 'assistant', 'u1', null, true)];
    expect(derive(nodes, null).branches[0]!.complete).toBe(0);
    const later = [...nodes, shape('u2', 3, 'user', 'a1'), shape('a2', 4, 'assistant', 'u2')];
    expect(derive(later, null).branches[0]!.complete).toBe(2);
  });

  it('rejects broken DAGs with typed errors', () => {
    const u = shape('u', 1, 'user', null);
    expect(() => derive([u, shape('u', 2, 'assistant', 'u')], null)).toThrow(
      expect.objectContaining({ code: 'DAG_DUPLICATE_ID' }),
    );
    expect(() => derive([u, shape('a', 1, 'assistant', 'u')], null)).toThrow(
      expect.objectContaining({ code: 'DAG_DUPLICATE_SEQ' }),
    );
    expect(() => derive([u, shape('a', 2, 'assistant', 'ghost')], null)).toThrow(
      expect.objectContaining({ code: 'DAG_MISSING_PREDECESSOR' }),
    );
    expect(() => derive([u, shape('t', 2, 'tool', 'u', 'ghost')], null)).toThrow(
      expect.objectContaining({ code: 'DAG_MISSING_PREDECESSOR' }),
    );
    const loop = [shape('x', 1, 'user', 'y'), shape('y', 2, 'assistant', 'x')];
    expect(() => derive(loop, null)).toThrow(expect.objectContaining({ code: 'DAG_CYCLE' }));
    expect(() => derive([u, ...loop.map((n, i) => ({ ...n, seq: i + 2 }))], null)).toThrow(
      expect.objectContaining({ code: 'DAG_CYCLE' }),
    );
  });

  it('handles a 10,000-deep chain without recursion', () => {
    const nodes: NodeShape[] = [];
    for (let i = 1; i <= 10_000; i++)
      nodes.push(shape(`n${i}`, i, i % 2 ? 'user' : 'assistant', i === 1 ? null : `n${i - 1}`));
    const d = derive(nodes, null);
    expect(d.branches).toHaveLength(1);
    expect(d.branches[0]!.turns).toHaveLength(5000);
  });
});
