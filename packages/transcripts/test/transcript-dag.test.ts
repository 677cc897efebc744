import { describe, expect, it } from 'vitest';
import type { DagNode } from '@entity-git/core';
import { TranscriptDag, type ParsedSession } from '../src/index.js';

const session = (id: string, count: number): ParsedSession => ({
  session: {
    id,
    title: null,
    agent_id: null,
    model: null,
    project_id: null,
    head: null,
    created_at: 1,
    metadata: null,
  },
  nodes: Array.from(
    { length: count },
    (_, i): DagNode => ({
      id: `n${i + 1}`,
      session_id: id,
      seq: i + 1,
      role: i % 2 ? 'assistant' : 'user',
      content: `c${i + 1}`,
      predecessor: i ? `n${i}` : null,
      caller: null,
      created_at: 1 + i,
      metadata: null,
    }),
  ),
});

async function read(dag: TranscriptDag, id: string, after?: number): Promise<string[]> {
  const out: string[] = [];
  for await (const n of dag.nodesAfter(id, after)) out.push(n.id);
  return out;
}

describe('TranscriptDag', () => {
  it('reads nodes after a seq, lists sessions with nodes in the order set, hands out copies', async () => {
    const dag = new TranscriptDag();
    dag.set(session('b', 3));
    dag.set(session('empty', 0));
    dag.set(session('a', 2));
    expect(await dag.listSessions()).toEqual(['b', 'a']);
    expect(await read(dag, 'b')).toEqual(['n1', 'n2', 'n3']);
    expect(await read(dag, 'b', 2)).toEqual(['n3']);
    expect(await read(dag, 'b', 3)).toEqual([]);
    expect(await read(dag, 'nope')).toEqual([]);
    expect(await dag.getSession('nope')).toBeNull();
    expect(await dag.getHead('b')).toBeNull();
    const s = (await dag.getSession('b'))!;
    s.title = 'changed';
    expect((await dag.getSession('b'))!.title).toBeNull();
    dag.set(session('b', 4));
    expect(await read(dag, 'b', 3)).toEqual(['n4']);
  });

  it('refuses nodes out of seq order or of another session, keeping the previous parse', async () => {
    const dag = new TranscriptDag();
    dag.set(session('a', 2));
    const bad = session('a', 3);
    bad.nodes[2]!.seq = 7;
    expect(() => dag.set(bad)).toThrow(expect.objectContaining({ code: 'INVALID_NODE' }));
    const other = session('a', 1);
    other.nodes[0]!.session_id = 'z';
    expect(() => dag.set(other)).toThrow(expect.objectContaining({ code: 'INVALID_NODE' }));
    expect(await read(dag, 'a')).toEqual(['n1', 'n2']);
  });

  it('hands out a copy as a JSON round trip makes it, keys in order, an own __proto__ key kept', async () => {
    const dag = new TranscriptDag();
    const parsed = session('p', 1);
    const content = JSON.parse('{"z": 1, "__proto__": {"b": [-0, 2], "a": "x"}, "m": [{"y": true, "x": null}]}');
    parsed.nodes[0]!.content = content;
    parsed.nodes[0]!.metadata = { zz: undefined, é: 1, e: Number.NaN } as never;
    dag.set(parsed);
    const [node] = await (async () => {
      const out: DagNode[] = [];
      for await (const n of dag.nodesAfter('p')) out.push(n);
      return out;
    })();
    expect(JSON.stringify(node)).toBe(JSON.stringify(JSON.parse(JSON.stringify(sortKeys(parsed.nodes[0])))));
    const copied = node!.content as Record<string, unknown>;
    expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
    expect(Object.keys(copied)).toEqual(['__proto__', 'm', 'z']);
    expect(Object.keys(node!)).toEqual([...Object.keys(node!)].sort());
    expect(node!.metadata).toEqual({ e: null, é: 1 });
  });
});

/** A value with every object's keys in order (the order TranscriptDag's copies list them in). */
function sortKeys(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(sortKeys);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort())
    Object.defineProperty(out, k, {
      value: sortKeys((v as Record<string, unknown>)[k]),
      enumerable: true,
      writable: true,
    });
  return out;
}
