import type { JsonValue } from '@entity-git/core';
import { describe, expect, it } from 'vitest';
import { T0, type DagSourceFixture, type SuiteHelpers } from './fixture.js';

/**
 * The `appending and reading nodes` part of {@link testDagSource}: seqs, defaults, paging with
 * `nodesAfter`, values and ids kept exactly, copies, concurrent appends.
 */
export function nodeTests(f: DagSourceFixture, helpers: SuiteHelpers): void {
  describe('appending and reading nodes', () => {
    appendTests(f, helpers);
    pagingTests(f, helpers);
    exactValueTests(f, helpers);
    edgeTests(f, helpers);
    isolationTests(f, helpers);
  });
}

/** `appendNode`: the seq it assigns and the node it stores. */
function appendTests(f: DagSourceFixture, { read }: SuiteHelpers): void {
  it('appendNode assigns seq 1, 2, 3… per session, each session on its own', async () => {
    await f.writer.createSession({ id: 's1', created_at: T0 });
    await f.writer.createSession({ id: 's2', created_at: T0 + 1 });
    const seqs: Array<[string, number]> = [];
    for (const [id, sid] of [
      ['a', 's1'],
      ['b', 's2'],
      ['c', 's1'],
      ['d', 's1'],
      ['e', 's2'],
    ] as const) {
      const n = await f.writer.appendNode({ id, session_id: sid, role: 'user', content: id });
      seqs.push([id, n.seq]);
    }
    expect(seqs).toEqual([
      ['a', 1],
      ['b', 1],
      ['c', 2],
      ['d', 3],
      ['e', 2],
    ]);
    expect((await read('s1')).map((n) => [n.id, n.seq])).toEqual([
      ['a', 1],
      ['c', 2],
      ['d', 3],
    ]);
    expect((await read('s2')).map((n) => [n.id, n.seq])).toEqual([
      ['b', 1],
      ['e', 2],
    ]);
  });

  it('appendNode returns the stored node, with null defaults and a created_at', async () => {
    await f.writer.createSession({ id: 's' });
    const n = await f.writer.appendNode({ id: 'u1', session_id: 's', role: 'user', content: 'hello' });
    expect(n).toEqual({
      id: 'u1',
      session_id: 's',
      seq: 1,
      role: 'user',
      content: 'hello',
      predecessor: null,
      caller: null,
      created_at: expect.any(Number),
      metadata: null,
    });
    expect(await read('s')).toEqual([n]);
  });
}

/** `nodesAfter`: order, the exclusive `afterSeq`, batch sizes, iterators abandoned or overtaken by appends. */
function pagingTests(f: DagSourceFixture, { read, chain }: SuiteHelpers): void {
  it('nodesAfter yields every node of the session in seq order', async () => {
    await f.writer.createSession({ id: 's' });
    const written = await chain('s', 12);
    const got = await read('s');
    expect(got).toEqual(written);
    expect(got.map((n) => n.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });

  it('nodesAfter(afterSeq) is exclusive, and reading after the last seq picks up only new nodes', async () => {
    await f.writer.createSession({ id: 's' });
    await chain('s', 12);
    expect((await read('s', 5)).map((n) => n.seq)).toEqual([6, 7, 8, 9, 10, 11, 12]);
    expect((await read('s', 0)).length).toBe(12);
    expect(await read('s', 12)).toEqual([]);
    expect(await read('s', 100)).toEqual([]);
    for (const id of ['x1', 'x2', 'x3']) await f.writer.appendNode({ id, session_id: 's', role: 'user', content: id });
    expect((await read('s', 12)).map((n) => [n.id, n.seq])).toEqual([
      ['x1', 13],
      ['x2', 14],
      ['x3', 15],
    ]);
  });

  it('every batch size yields the same nodes', async () => {
    await f.writer.createSession({ id: 's' });
    const written = await chain('s', 13);
    for (const batchSize of [1, 2, 5, 12, 13, 14, 1000]) {
      expect(await read('s', 0, batchSize)).toEqual(written);
      expect((await read('s', 4, batchSize)).map((n) => n.seq)).toEqual([5, 6, 7, 8, 9, 10, 11, 12, 13]);
    }
  });

  it('nodesAfter of an unknown session yields nothing', async () => {
    expect(await read('nope')).toEqual([]);
  });

  it('an iterator may be abandoned early; the next one starts afresh', async () => {
    await f.writer.createSession({ id: 's' });
    await chain('s', 7);
    const firstThree: number[] = [];
    for await (const n of f.source.nodesAfter('s', 0, { batchSize: 2 })) {
      firstThree.push(n.seq);
      if (firstThree.length === 3) break;
    }
    expect(firstThree).toEqual([1, 2, 3]);
    expect((await read('s')).map((n) => n.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('nodes appended while an iterator is paging are read once each, in order', async () => {
    await f.writer.createSession({ id: 's' });
    await chain('s', 4);
    const seen: number[] = [];
    let added = 0;
    for await (const n of f.source.nodesAfter('s', 0, { batchSize: 2 })) {
      seen.push(n.seq);
      if (added < 3)
        await f.writer.appendNode({ id: `late${++added}`, session_id: 's', role: 'user', content: 'late' });
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });
}

/** Values and ids kept exactly: every kind of JSON, lone surrogates, NUL, ids unsafe as file names. */
function exactValueTests(f: DagSourceFixture, { read }: SuiteHelpers): void {
  it('content and metadata round-trip exactly, lone surrogates and NUL included', async () => {
    await f.writer.createSession({ id: 's' });
    const contents: JsonValue[] = [
      'plain',
      '',
      'emoji 🙂👍🏽 and CJK 列出文件',
      'lone high \ud800 end',
      'lone low \udfff',
      'x\udc00\ud800y',
      '\u0000nul\u0000',
      'ctl \u0001\u001f\u007f\u2028\u2029',
      'quotes " \\ \' </script>',
      'x'.repeat(200_000),
      0,
      -1.5,
      1e300,
      5e-324,
      2 ** 53 - 1,
      0.1 + 0.2,
      true,
      false,
      null,
      [],
      {},
      { z: 1, a: [1, 'two', { three: null }], m: { '': 'empty key', 'a.b': 'dotted', '10': 'numeric', é: 'é' } },
      JSON.parse('{"__proto__": {"polluted": true}, "b": 2}') as JsonValue,
      nested(60),
    ];
    for (const [i, content] of contents.entries()) {
      const metadata = { i, echo: content, pending: i % 2 === 0 };
      await f.writer.appendNode({ id: `c${i}`, session_id: 's', role: 'assistant', content, metadata });
    }
    const got = await read('s', 0, 7);
    expect(got.length).toBe(contents.length);
    for (const [i, n] of got.entries()) {
      // Compared as JSON text: equal values with keys in another order would not pass.
      expect(JSON.stringify(n.content)).toBe(JSON.stringify(contents[i]));
      expect(JSON.stringify(n.metadata)).toBe(JSON.stringify({ i, echo: contents[i], pending: i % 2 === 0 }));
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('ids are kept verbatim, including ones unsafe as file names', async () => {
    const ids = ['a/b', '../up', 'space id', 'é', '🙂', '.git', 'CON', 'x.lock', '%41', 'y'.repeat(300)];
    for (const [i, sid] of ids.entries()) {
      await f.writer.createSession({ id: `session ${sid}`, created_at: T0 + i });
      await f.writer.appendNode({
        id: `node ${sid}`,
        session_id: `session ${sid}`,
        role: 'user',
        content: sid,
        predecessor: `pred ${sid}`,
      });
    }
    expect(await f.source.listSessions()).toEqual(ids.map((sid) => `session ${sid}`));
    for (const sid of ids) {
      const [n] = await read(`session ${sid}`);
      expect(n).toMatchObject({
        id: `node ${sid}`,
        session_id: `session ${sid}`,
        predecessor: `pred ${sid}`,
        content: sid,
      });
      expect((await f.source.getSession(`session ${sid}`))?.id).toBe(`session ${sid}`);
    }
  });
}

/** The edges of the DAG: predecessor, caller, a fork, and a fractional `created_at`. */
function edgeTests(f: DagSourceFixture, { read, chain }: SuiteHelpers): void {
  it('predecessor, caller and a fractional created_at are kept', async () => {
    await f.writer.createSession({ id: 's' });
    await f.writer.appendNode({
      id: 'u',
      session_id: 's',
      role: 'user',
      content: 'list files',
      created_at: T0 + 0.123456,
    });
    await f.writer.appendNode({
      id: 'a',
      session_id: 's',
      role: 'assistant',
      content: { tool_calls: [{ name: 'list' }] },
      predecessor: 'u',
      created_at: T0 + 1.000001,
    });
    await f.writer.appendNode({
      id: 't',
      session_id: 's',
      role: 'tool',
      content: 'a.ts',
      predecessor: 'a',
      caller: 'a',
      created_at: T0 + 2.5,
      metadata: { tool: 'list' },
    });
    await f.writer.appendNode({
      id: 'sys',
      session_id: 's',
      role: 'system',
      content: 'note',
      predecessor: 't',
      created_at: 1.5,
    });
    expect((await read('s')).map((n) => [n.id, n.role, n.predecessor, n.caller, n.created_at])).toEqual([
      ['u', 'user', null, null, T0 + 0.123456],
      ['a', 'assistant', 'u', null, T0 + 1.000001],
      ['t', 'tool', 'a', 'a', T0 + 2.5],
      ['sys', 'system', 't', null, 1.5],
    ]);
  });

  it('a fork keeps both children of one predecessor, each with its own seq', async () => {
    await f.writer.createSession({ id: 's' });
    await chain('s', 2);
    await f.writer.appendNode({
      id: 'retry',
      session_id: 's',
      role: 'assistant',
      content: 'again',
      predecessor: 'n1',
    });
    await f.writer.appendNode({ id: 'edit', session_id: 's', role: 'user', content: 'edited' });
    const got = await read('s');
    expect(got.filter((n) => n.predecessor === 'n1').map((n) => [n.id, n.seq])).toEqual([
      ['n2', 2],
      ['retry', 3],
    ]);
    expect(got.map((n) => n.id)).toEqual(['n1', 'n2', 'retry', 'edit']);
  });
}

/** Nodes handed out are copies, and concurrent appends do not collide. */
function isolationTests(f: DagSourceFixture, { read }: SuiteHelpers): void {
  it('returned and yielded nodes are copies: changing them changes nothing stored', async () => {
    await f.writer.createSession({ id: 's', metadata: { keep: 1 } });
    const n = await f.writer.appendNode({
      id: 'u',
      session_id: 's',
      role: 'user',
      content: { text: 'original' },
      metadata: { tags: ['x'] },
    });
    (n.content as { text: string }).text = 'changed';
    const [yielded] = await read('s');
    (yielded!.metadata as { tags: string[] }).tags.push('y');
    (await f.source.getSession('s'))!.metadata = null;
    const [again] = await read('s');
    expect(again).toMatchObject({ content: { text: 'original' }, metadata: { tags: ['x'] } });
    expect((await f.source.getSession('s'))!.metadata).toEqual({ keep: 1 });
  });

  it('concurrent appends to one session get distinct, consecutive seqs', async () => {
    await f.writer.createSession({ id: 's' });
    const nodes = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        f.writer.appendNode({ id: `p${i}`, session_id: 's', role: 'user', content: i }),
      ),
    );
    expect(nodes.map((n) => n.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    const got = await read('s', 0, 4);
    expect(got.map((n) => n.seq)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(new Set(got.map((n) => n.id)).size).toBe(25);
  });
}

function nested(depth: number): JsonValue {
  let v: JsonValue = 'bottom';
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? { d: v } : [v];
  return v;
}
