import type { DagNode, DagSource, DagWriter, JsonValue, Role } from '@entity-git/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** A fresh, empty DAG for one test: its read side, its write side, and how to dispose of it. */
export interface DagSourceFixture {
  source: DagSource;
  writer: DagWriter;
  cleanup?: () => unknown;
}

export interface DagSourceSuiteOptions {
  /** Shown in the suite's title, e.g. `'sqlite'`. */
  name: string;
  /** Called before every test; the DAG must be empty. */
  create: () => Promise<DagSourceFixture>;
}

const T0 = 1_700_000_000;

/** An error from the library with this literal `code` (tests never look at messages). */
async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  await expect(promise).rejects.toMatchObject({ name: 'EntityGitError', code });
}

/**
 * The contract of {@link DagSource} and {@link DagWriter} (core's `dag-source.ts`), run against
 * one implementation. Every adapter's test file calls it; `MemoryDag` is the reference.
 */
export function testDagSource(options: DagSourceSuiteOptions): void {
  describe(`DagSource conformance: ${options.name}`, () => {
    let f: DagSourceFixture;
    beforeEach(async () => {
      f = await options.create();
    });
    afterEach(async () => {
      await f?.cleanup?.();
    });

    async function read(sessionId: string, afterSeq?: number, batchSize?: number): Promise<DagNode[]> {
      const out: DagNode[] = [];
      for await (const n of f.source.nodesAfter(
        sessionId,
        afterSeq,
        batchSize === undefined ? undefined : { batchSize },
      ))
        out.push(n);
      return out;
    }

    /** The session's head by `getHead`, or by `getSession` for a source without it (it is optional). */
    async function head(sessionId: string): Promise<string | null> {
      return f.source.getHead ? f.source.getHead(sessionId) : ((await f.source.getSession(sessionId))?.head ?? null);
    }

    /** A user/assistant chain of `count` nodes, `<prefix>1…`, each continuing from the previous. */
    async function chain(sessionId: string, count: number, prefix = 'n'): Promise<DagNode[]> {
      const nodes: DagNode[] = [];
      for (let i = 1; i <= count; i++) {
        const role: Role = i % 2 === 1 ? 'user' : 'assistant';
        nodes.push(
          await f.writer.appendNode({
            id: `${prefix}${i}`,
            session_id: sessionId,
            role,
            content: `${role} says ${i}`,
            predecessor: nodes.at(-1)?.id ?? null,
            created_at: T0 + i,
          }),
        );
      }
      return nodes;
    }

    describe('sessions', () => {
      it('createSession fills the defaults and getSession returns the stored row', async () => {
        const s = await f.writer.createSession({ id: 'plain' });
        expect(s).toEqual({
          id: 'plain',
          title: null,
          agent_id: null,
          model: null,
          project_id: null,
          head: null,
          created_at: expect.any(Number),
          metadata: null,
        });
        expect(Number.isFinite(s.created_at)).toBe(true);
        expect(await f.source.getSession('plain')).toEqual(s);
      });

      it('createSession keeps every field it is given', async () => {
        const given = {
          id: 'full',
          title: 'Refactor the parser ✨',
          agent_id: 'agent-7',
          model: 'model-x',
          project_id: null,
          head: null,
          created_at: T0 + 0.25,
          metadata: { tags: ['a', 'b'], nested: { depth: 2, ok: true }, n: 1.5 },
        };
        expect(await f.writer.createSession(given)).toEqual(given);
        expect(await f.source.getSession('full')).toEqual(given);
      });

      it('getSession and getHead of an unknown session give null', async () => {
        expect(await f.source.getSession('nope')).toBeNull();
        expect(await head('nope')).toBeNull();
      });

      it('listSessions gives every session in creation order', async () => {
        expect(await f.source.listSessions()).toEqual([]);
        for (const [i, id] of ['m', 'b', 'z', 'a'].entries()) await f.writer.createSession({ id, created_at: T0 + i });
        expect(await f.source.listSessions()).toEqual(['m', 'b', 'z', 'a']);
      });

      it('sessions created back to back with the default created_at also list in creation order', async () => {
        const ids = ['q', 'c', 'x', 'b', 'k', 'a', 'z', 'm'];
        for (const id of ids) await f.writer.createSession({ id });
        expect(await f.source.listSessions()).toEqual(ids);
      });

      it('a second session with an existing id is refused with INVALID_SESSION and the first is kept', async () => {
        const first = await f.writer.createSession({ id: 'dup', title: 'first' });
        await expectCode(f.writer.createSession({ id: 'dup', title: 'second' }), 'INVALID_SESSION');
        expect(await f.source.getSession('dup')).toEqual(first);
        expect(await f.source.listSessions()).toEqual(['dup']);
      });

      it('invalid sessions are refused by code and not stored', async () => {
        await expectCode(f.writer.createSession({ id: '' }), 'INVALID_ID');
        await expectCode(
          f.writer.createSession({ id: 'bad-title', title: 42 as unknown as string }),
          'INVALID_SESSION',
        );
        await expectCode(f.writer.createSession({ id: 'bad-time', created_at: Number.NaN }), 'INVALID_SESSION');
        await expectCode(
          f.writer.createSession({ id: 'bad-meta', metadata: { f: (() => 1) as unknown as JsonValue } }),
          'NON_JSON_VALUE',
        );
        expect(await f.source.listSessions()).toEqual([]);
      });
    });

    describe('appending and reading nodes', () => {
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
        for (const id of ['x1', 'x2', 'x3'])
          await f.writer.appendNode({ id, session_id: 's', role: 'user', content: id });
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
    });

    describe('placeholders', () => {
      it('fillNode replaces content and metadata and keeps the seq and everything else', async () => {
        await f.writer.createSession({ id: 's' });
        await f.writer.appendNode({ id: 'u', session_id: 's', role: 'user', content: 'question', created_at: T0 });
        const ph = await f.writer.appendNode({
          id: 'a',
          session_id: 's',
          role: 'assistant',
          content: '',
          predecessor: 'u',
          created_at: T0 + 1,
          metadata: { pending: true },
        });
        await f.writer.appendNode({
          id: 'u2',
          session_id: 's',
          role: 'user',
          content: 'later',
          predecessor: 'a',
          created_at: T0 + 2,
        });
        const filled = await f.writer.fillNode('s', 'a', { text: 'the answer 🙂' }, { pending: false, tokens: 12 });
        expect(filled).toEqual({ ...ph, content: { text: 'the answer 🙂' }, metadata: { pending: false, tokens: 12 } });
        const got = await read('s');
        expect(got.map((n) => [n.id, n.seq])).toEqual([
          ['u', 1],
          ['a', 2],
          ['u2', 3],
        ]);
        expect(got[1]).toEqual(filled);
        expect(got[0]!.content).toBe('question');
        expect(got[2]!.content).toBe('later');
      });

      it('fillNode without metadata keeps the old metadata; with null it clears it', async () => {
        await f.writer.createSession({ id: 's' });
        await f.writer.appendNode({
          id: 'a',
          session_id: 's',
          role: 'assistant',
          content: '',
          metadata: { pending: true },
        });
        expect((await f.writer.fillNode('s', 'a', 'partial')).metadata).toEqual({ pending: true });
        expect((await read('s'))[0]).toMatchObject({ content: 'partial', metadata: { pending: true } });
        expect((await f.writer.fillNode('s', 'a', 'done', null)).metadata).toBeNull();
        expect((await read('s'))[0]).toMatchObject({ content: 'done', metadata: null, seq: 1 });
      });

      it('fillNode of an unknown node, or of a node in another session, is NODE_NOT_FOUND', async () => {
        await f.writer.createSession({ id: 's' });
        await f.writer.createSession({ id: 'other' });
        await f.writer.appendNode({ id: 'a', session_id: 's', role: 'assistant', content: 'kept' });
        await expectCode(f.writer.fillNode('s', 'missing', 'x'), 'NODE_NOT_FOUND');
        await expectCode(f.writer.fillNode('other', 'a', 'x'), 'NODE_NOT_FOUND');
        await expectCode(f.writer.fillNode('no-session', 'a', 'x'), 'NODE_NOT_FOUND');
        expect((await read('s'))[0]!.content).toBe('kept');
      });
    });

    describe('head', () => {
      it('is null by default; setHead moves it and getSession agrees', async () => {
        await f.writer.createSession({ id: 's' });
        await chain('s', 3);
        expect(await head('s')).toBeNull();
        await f.writer.setHead('s', 'n2');
        expect(await head('s')).toBe('n2');
        expect((await f.source.getSession('s'))!.head).toBe('n2');
        await f.writer.setHead('s', 'n3');
        expect(await head('s')).toBe('n3');
      });

      it('setHead(null) goes back to following the newest leaf', async () => {
        await f.writer.createSession({ id: 's' });
        await chain('s', 2);
        await f.writer.setHead('s', 'n1');
        await f.writer.setHead('s', null);
        expect(await head('s')).toBeNull();
        expect((await f.source.getSession('s'))!.head).toBeNull();
      });

      it('setHead to an unknown node or to a node of another session is NODE_NOT_FOUND, and the head stays', async () => {
        await f.writer.createSession({ id: 's' });
        await f.writer.createSession({ id: 'other' });
        await chain('s', 2);
        await f.writer.appendNode({ id: 'elsewhere', session_id: 'other', role: 'user', content: 'x' });
        await f.writer.setHead('s', 'n1');
        await expectCode(f.writer.setHead('s', 'missing'), 'NODE_NOT_FOUND');
        await expectCode(f.writer.setHead('s', 'elsewhere'), 'NODE_NOT_FOUND');
        expect(await head('s')).toBe('n1');
      });

      it('setHead on an unknown session is SESSION_NOT_FOUND; an empty node id is INVALID_ID', async () => {
        await f.writer.createSession({ id: 's' });
        await expectCode(f.writer.setHead('nope', null), 'SESSION_NOT_FOUND');
        await expectCode(f.writer.setHead('s', ''), 'INVALID_ID');
        expect(await head('s')).toBeNull();
      });
    });

    describe('refused appends', () => {
      it('an append to an unknown session is SESSION_NOT_FOUND', async () => {
        await expectCode(
          f.writer.appendNode({ id: 'x', session_id: 'nope', role: 'user', content: 'x' }),
          'SESSION_NOT_FOUND',
        );
        expect(await read('nope')).toEqual([]);
      });

      it('invalid nodes are refused by code', async () => {
        await f.writer.createSession({ id: 's' });
        const base = { id: 'ok', session_id: 's', role: 'user' as Role, content: 'x' };
        await expectCode(f.writer.appendNode({ ...base, role: 'robot' as Role }), 'INVALID_NODE');
        await expectCode(f.writer.appendNode({ ...base, id: '' }), 'INVALID_ID');
        await expectCode(f.writer.appendNode({ ...base, predecessor: '' }), 'INVALID_ID');
        await expectCode(f.writer.appendNode({ ...base, created_at: Number.POSITIVE_INFINITY }), 'INVALID_NODE');
        await expectCode(
          f.writer.appendNode({ ...base, content: { big: 1n } as unknown as JsonValue }),
          'NON_JSON_VALUE',
        );
        await expectCode(
          f.writer.appendNode({ ...base, metadata: { gone: undefined } as unknown as JsonValue }),
          'NON_JSON_VALUE',
        );
        expect(await read('s')).toEqual([]);
      });

      it('a duplicate node id is DAG_DUPLICATE_ID and the stored node is kept', async () => {
        await f.writer.createSession({ id: 's' });
        await f.writer.appendNode({ id: 'a', session_id: 's', role: 'user', content: 'first' });
        await expectCode(
          f.writer.appendNode({ id: 'a', session_id: 's', role: 'user', content: 'second' }),
          'DAG_DUPLICATE_ID',
        );
        expect((await read('s')).map((n) => [n.id, n.content])).toEqual([['a', 'first']]);
      });

      it('a refused append consumes no seq', async () => {
        await f.writer.createSession({ id: 's' });
        await f.writer.appendNode({ id: 'a', session_id: 's', role: 'user', content: 'x' });
        await expectCode(
          f.writer.appendNode({ id: 'a', session_id: 's', role: 'user', content: 'x' }),
          'DAG_DUPLICATE_ID',
        );
        await expectCode(
          f.writer.appendNode({ id: 'b', session_id: 's', role: 'robot' as Role, content: 'x' }),
          'INVALID_NODE',
        );
        expect((await f.writer.appendNode({ id: 'b', session_id: 's', role: 'assistant', content: 'y' })).seq).toBe(2);
        expect((await read('s')).map((n) => n.seq)).toEqual([1, 2]);
      });
    });

    describe('change marker (optional; issue 22)', () => {
      it('when the source keeps one, every write changes it to a value not seen before, session by session', async (ctx) => {
        const marker = f.source.changeMarker?.bind(f.source);
        if (marker === undefined) return ctx.skip();
        await f.writer.createSession({ id: 's' });
        await f.writer.createSession({ id: 'other' });
        expect(await marker('unknown')).toBeNull();
        const seen = new Set<string | null>();
        const step = async (what: string, write: () => Promise<unknown>) => {
          const otherBefore = await marker('other');
          await write();
          const now = await marker('s');
          expect(now, what).not.toBeNull();
          expect(seen.has(now), `${what}: a marker seen before`).toBe(false);
          seen.add(now);
          // Reading changes nothing; another session's writes leave this one's marker alone.
          expect(await marker('s'), what).toBe(now);
          expect(await marker('other'), what).toBe(otherBefore);
        };
        await step('create', async () => undefined);
        await step('append', () => chain('s', 2));
        await step('fill', () => f.writer.fillNode('s', 'n2', 'filled', { pending: false }));
        await step('head', () => f.writer.setHead('s', 'n1'));
        await step('head back', () => f.writer.setHead('s', null));
        await step('append again', () =>
          f.writer.appendNode({ id: 'n3', session_id: 's', role: 'user', content: 'again', predecessor: 'n2' }),
        );
        // A refused write changes nothing, so it may leave the marker as it was.
        const before = await marker('s');
        await expectCode(
          f.writer.appendNode({ id: 'n3', session_id: 's', role: 'user', content: 'dup' }),
          'DAG_DUPLICATE_ID',
        );
        expect(await marker('s')).toBe(before);
      });
    });
  });
}

function nested(depth: number): JsonValue {
  let v: JsonValue = 'bottom';
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? { d: v } : [v];
  return v;
}
