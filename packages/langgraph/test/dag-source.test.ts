import { join } from 'node:path';
import type { DagNode } from '@entity-git/core';
import { HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { Annotation, MemorySaver, messagesStateReducer, START, StateGraph } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { createLangGraphDag, LANGGRAPH_AGENT } from '../src/index.js';
import { agent, ScriptedChatModel } from './helpers/agent.js';
import { clock } from './helpers/clock.js';
import { removeTempDirs, tempDir } from './helpers/git.js';

afterAll(removeTempDirs);

const T = 1_767_225_600;
const replies = (...ids: string[]) => ids.map((id) => ({ id, content: `reply ${id}` }));

async function read(dag: ReturnType<typeof createLangGraphDag>, threadId: string, after?: number) {
  const out: DagNode[] = [];
  for await (const n of dag.nodesAfter(threadId, after)) out.push(n);
  return out;
}

/** Threads `b` (first), then `a`, two turns each, on one saver, the clock faked. */
async function twoThreads(saver: MemorySaver | SqliteSaver) {
  const app = agent(saver, replies('rb1', 'ra1', 'rb2', 'ra2'), { onStep: () => clock.tick() });
  clock.start(T);
  try {
    for (const turn of [1, 2])
      for (const t of ['b', 'a']) {
        clock.tick(10);
        await app.invoke(
          { messages: [new HumanMessage({ id: `h${t}${turn}`, content: `${t} ${turn}` })] },
          { configurable: { thread_id: t } },
        );
      }
  } finally {
    clock.stop();
  }
}

describe('LangGraphDag as a DagSource (what applies to a read-only source)', () => {
  it('lists every thread in the order it began, or the given threads that exist, in their order', async () => {
    const saver = new MemorySaver();
    await twoThreads(saver);
    expect(await createLangGraphDag({ saver }).listSessions()).toEqual(['b', 'a']);
    expect(await createLangGraphDag({ saver, threads: ['a', 'missing', 'b', 'a'] }).listSessions()).toEqual(['a', 'b']);
    expect(await createLangGraphDag({ saver, threads: async () => ['b'] }).listSessions()).toEqual(['b']);
    await expect(createLangGraphDag({ saver, threads: [''] }).listSessions()).rejects.toMatchObject({
      code: 'INVALID_OPTION',
    });
    await expect(createLangGraphDag({ saver, threads: (() => 'a') as never }).listSessions()).rejects.toMatchObject({
      code: 'INVALID_OPTION',
    });
    expect(await createLangGraphDag({ saver: new MemorySaver() }).listSessions()).toEqual([]);
  });

  it('reads a session row, its head and nodes after a seq (exclusive), and hands out copies', async () => {
    const saver = new MemorySaver();
    await twoThreads(saver);
    const dag = createLangGraphDag({ saver });
    const row = await dag.getSession('a');
    expect(row).toEqual({
      id: 'a',
      title: null,
      agent_id: LANGGRAPH_AGENT,
      model: null,
      project_id: null,
      head: 'ra2',
      // b began at T + 10 and took a second of the model's; a began ten seconds later.
      created_at: T + 21,
      metadata: { source: 'langgraph', channel: 'messages' },
    });
    expect(await dag.getHead('a')).toBe('ra2');
    row!.head = 'changed';
    expect((await dag.getSession('a'))!.head).toBe('ra2');
    expect((await read(dag, 'a')).map((n) => [n.seq, n.id])).toEqual([
      [1, 'ha1'],
      [2, 'ra1'],
      [3, 'ha2'],
      [4, 'ra2'],
    ]);
    expect((await read(dag, 'a', 2)).map((n) => n.id)).toEqual(['ha2', 'ra2']);
    expect((await read(dag, 'a', 2.5)).map((n) => n.id)).toEqual(['ha2', 'ra2']);
    expect(await read(dag, 'a', 4)).toEqual([]);
    expect(await read(dag, 'a', 40)).toEqual([]);
    const [first] = await read(dag, 'a');
    first!.content = 'changed';
    (first!.metadata as Record<string, unknown>).type = 'changed';
    expect((await read(dag, 'a'))[0]).toMatchObject({ content: 'a 1', metadata: { type: 'human' } });
    for (const unknown of ['missing', '']) {
      expect(await dag.getSession(unknown)).toBeNull();
      expect(await dag.getHead(unknown)).toBeNull();
      expect(await dag.changeMarker(unknown)).toBeNull();
      expect(await read(dag, unknown)).toEqual([]);
    }
  });

  it('keeps a bounded number of threads in memory and reads an evicted one again to the same nodes', async () => {
    const saver = new MemorySaver();
    await twoThreads(saver);
    const roomy = createLangGraphDag({ saver });
    const tight = createLangGraphDag({ saver, cachedThreads: 1 });
    for (const t of ['a', 'b', 'a', 'b']) expect(await read(tight, t)).toEqual(await read(roomy, t));
  });

  it('reads the channel it is told to, and its marker names the channel', async () => {
    const saver = new MemorySaver();
    const model = new ScriptedChatModel(replies('r1'));
    const State = Annotation.Root({
      chat: Annotation<BaseMessage[]>({ reducer: messagesStateReducer, default: () => [] }),
    });
    const app = new StateGraph(State)
      .addNode('agent', async (s) => ({ chat: [await model.invoke(s.chat)] }))
      .addEdge(START, 'agent')
      .compile({ checkpointer: saver });
    await app.invoke({ chat: [new HumanMessage({ id: 'h1', content: 'hi' })] }, { configurable: { thread_id: 't' } });
    const chat = createLangGraphDag({ saver, channel: 'chat' });
    expect((await read(chat, 't')).map((n) => n.id)).toEqual(['h1', 'r1']);
    expect(await read(createLangGraphDag({ saver }), 't')).toEqual([]);
    expect(await chat.changeMarker('t')).not.toBe(await createLangGraphDag({ saver }).changeMarker('t'));
  });

  it('a checkpointer that fails is DB_ERROR; options it cannot use are INVALID_OPTION', async () => {
    const saver = SqliteSaver.fromConnString(join(tempDir(), 'checkpoints.sqlite'));
    await twoThreads(saver);
    const dag = createLangGraphDag({ saver });
    saver.db.close();
    for (const call of [dag.listSessions(), dag.getSession('a'), dag.changeMarker('a'), read(dag, 'a')])
      await expect(call).rejects.toMatchObject({ name: 'EntityGitError', code: 'DB_ERROR' });

    for (const bad of [
      {},
      { saver: {} },
      { saver, channel: '' },
      { saver, cachedThreads: 0 },
      { saver, cachedThreads: 1.5 },
      { saver, threads: 'a' },
    ])
      expect(() => createLangGraphDag(bad as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });
});
