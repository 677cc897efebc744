import type { DagNode } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { AIMessage, HumanMessage, RemoveMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import {
  Annotation,
  DeltaChannel,
  MemorySaver,
  MessagesAnnotation,
  messagesDeltaReducer,
  REMOVE_ALL_MESSAGES,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { afterAll, describe, expect, it } from 'vitest';
import { createLangGraphDag } from '../src/index.js';
import { agent, ScriptedChatModel } from './helpers/agent.js';
import { branches, commits, files, fsck, git, removeTempDirs, tempDir } from './helpers/git.js';

afterAll(removeTempDirs);

async function read(dag: ReturnType<typeof createLangGraphDag>, threadId: string): Promise<DagNode[]> {
  const out: DagNode[] = [];
  for await (const n of dag.nodesAfter(threadId)) out.push(n);
  return out;
}

const edges = (nodes: DagNode[]) => nodes.map((n) => [n.seq, n.id, n.role, n.predecessor]);
const replies = (...ids: string[]) => ids.map((id) => ({ id, content: `reply ${id}` }));
const lastId = (s: { values: { messages: BaseMessage[] } }) => s.values.messages.at(-1)?.id;

/** A mirror over a fresh source in a fresh root, synced; its repository. */
async function mirrored(saver: MemorySaver, threadId: string): Promise<string> {
  const mirror = createNodeMirror({ dag: createLangGraphDag({ saver }), root: tempDir() });
  await mirror.sync(threadId);
  const repo = mirror.repoPath(threadId);
  expect(fsck(repo)).toBe('');
  expect(git(repo, 'status', '--porcelain')).toBe('');
  return repo;
}

describe('how checkpoints become the DAG', () => {
  it('a message edited through time travel (updateState with its id) is a new version, a fork; the first version stays on main', async () => {
    const saver = new MemorySaver();
    const app = agent(saver, replies('r1', 'r2', 'r3'));
    const thread = { configurable: { thread_id: 'edit' } };
    await app.invoke({ messages: [new HumanMessage({ id: 'h1', content: 'one' })] }, thread);
    await app.invoke({ messages: [new HumanMessage({ id: 'h2', content: 'two' })] }, thread);
    const history = [];
    for await (const s of app.getStateHistory(thread)) history.push(s);
    const asked = history.find((s) => lastId(s) === 'h2' && s.next.includes('agent'))!;
    const edited = await app.updateState(
      asked.config,
      { messages: [new HumanMessage({ id: 'h2', content: 'two, edited' })] },
      '__start__',
    );
    await app.invoke(null, edited);
    expect((await app.getState(thread)).values.messages.map((m: BaseMessage) => [m.id, m.content])).toEqual([
      ['h1', 'one'],
      ['r1', 'reply r1'],
      ['h2', 'two, edited'],
      ['r3', 'reply r3'],
    ]);

    const dag = createLangGraphDag({ saver });
    const nodes = await read(dag, 'edit');
    expect(edges(nodes)).toEqual([
      [1, 'h1', 'user', null],
      [2, 'r1', 'assistant', 'h1'],
      [3, 'h2', 'user', 'r1'],
      [4, 'r2', 'assistant', 'h2'],
      [5, 'h2.v2', 'user', 'r1'],
      [6, 'r3', 'assistant', 'h2.v2'],
    ]);
    expect([nodes[2]!.content, nodes[4]!.content]).toEqual(['two', 'two, edited']);
    expect(nodes[4]!.metadata).toEqual({ message_id: 'h2', type: 'human' });
    const repo = await mirrored(saver, 'edit');
    expect(Object.keys(branches(repo)).sort()).toEqual(['fork-h2.v2', 'main']);
    expect(files(repo, 'fork-h2.v2')).toContain('messages/000005-u-h2.v2.json');
    expect(commits(repo, 'main').map((c) => c.message.split('\n')[0])).toEqual(['turn 1: one', 'turn 2: two']);
    expect(commits(repo, 'fork-h2.v2').map((c) => c.message.split('\n')[0])).toEqual([
      'turn 1: one',
      'turn 2: two, edited',
    ]);
    expect(git(repo, 'symbolic-ref', '--short', 'HEAD').trim()).toBe('fork-h2.v2');
  });

  it('messages removed from the state (RemoveMessage) stay in the history; after REMOVE_ALL_MESSAGES the channel starts a new root', async () => {
    const saver = new MemorySaver();
    const app = agent(saver, replies('r1', 'r2', 'r3', 'r4'));
    const thread = { configurable: { thread_id: 'trim' } };
    await app.invoke({ messages: [new HumanMessage({ id: 'h1', content: 'one' })] }, thread);
    await app.invoke({ messages: [new HumanMessage({ id: 'h2', content: 'two' })] }, thread);
    await app.updateState(thread, { messages: [new RemoveMessage({ id: 'h1' }), new RemoveMessage({ id: 'r1' })] });
    await app.invoke({ messages: [new HumanMessage({ id: 'h3', content: 'three' })] }, thread);
    expect((await app.getState(thread)).values.messages.map((m: BaseMessage) => m.id)).toEqual([
      'h2',
      'r2',
      'h3',
      'r3',
    ]);

    const dag = createLangGraphDag({ saver });
    expect(edges(await read(dag, 'trim'))).toEqual([
      [1, 'h1', 'user', null],
      [2, 'r1', 'assistant', 'h1'],
      [3, 'h2', 'user', 'r1'],
      [4, 'r2', 'assistant', 'h2'],
      [5, 'h3', 'user', 'r2'],
      [6, 'r3', 'assistant', 'h3'],
    ]);
    let repo = await mirrored(saver, 'trim');
    expect(Object.keys(branches(repo))).toEqual(['main']);
    expect(commits(repo, 'main')).toHaveLength(3);

    // A summary in place of everything: what the model sees from then on has no past.
    await app.updateState(thread, {
      messages: [
        new RemoveMessage({ id: REMOVE_ALL_MESSAGES }),
        new SystemMessage({ id: 'sum', content: 'Summary: three questions.' }),
      ],
    });
    await app.invoke({ messages: [new HumanMessage({ id: 'h4', content: 'four' })] }, thread);
    expect(edges(await read(dag, 'trim')).slice(6)).toEqual([
      [7, 'sum', 'system', null],
      [8, 'h4', 'user', 'sum'],
      [9, 'r4', 'assistant', 'h4'],
    ]);
    repo = await mirrored(saver, 'trim');
    expect(Object.keys(branches(repo)).sort()).toEqual(['fork-sum', 'main']);
    expect(commits(repo, 'main')).toHaveLength(3);
    expect(files(repo, 'fork-sum')).toEqual([
      'messages/000007-s-sum.json',
      'messages/000008-u-h4.json',
      'messages/000009-a-r4.json',
      'meta.json',
    ]);
    expect(git(repo, 'symbolic-ref', '--short', 'HEAD').trim()).toBe('fork-sum');
  });

  it('messages without ids (a channel of its own, no id-giving reducer) are m<seq>, stable as the thread grows', async () => {
    const saver = new MemorySaver();
    const model = new ScriptedChatModel([{ content: 'first' }, { content: 'second' }]);
    const State = Annotation.Root({
      messages: Annotation<BaseMessage[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
    });
    const app = new StateGraph(State)
      .addNode('agent', async (s) => ({ messages: [await model.invoke(s.messages)] }))
      .addEdge(START, 'agent')
      .compile({ checkpointer: saver });
    const thread = { configurable: { thread_id: 'idless' } };
    const dag = createLangGraphDag({ saver });
    const mirror = createNodeMirror({ dag, root: tempDir() });
    const bare = (content: string) => {
      const m = new HumanMessage(content);
      m.id = undefined;
      return m;
    };
    await app.invoke({ messages: [bare('hello')] }, thread);
    expect((await app.getState(thread)).values.messages.map((m: BaseMessage) => m.id ?? null)).toEqual([null, null]);
    await mirror.sync('idless');
    await app.invoke({ messages: [bare('again')] }, thread);
    await mirror.sync('idless');
    expect(edges(await read(dag, 'idless'))).toEqual([
      [1, 'm1', 'user', null],
      [2, 'm2', 'assistant', 'm1'],
      [3, 'm3', 'user', 'm2'],
      [4, 'm4', 'assistant', 'm3'],
    ]);
    const repo = mirror.repoPath('idless');
    expect(branches(repo)).toEqual(branches(await mirrored(saver, 'idless')));
    expect(commits(repo, 'main')).toHaveLength(2);
  });

  it('only the graph itself is mirrored: a subgraph’s checkpoints (another namespace) are not', async () => {
    const saver = new MemorySaver();
    const model = new ScriptedChatModel(replies('r1'));
    const inner = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (s) => ({ messages: [await model.invoke(s.messages)] }))
      .addEdge(START, 'agent')
      .compile();
    const app = new StateGraph(MessagesAnnotation)
      .addNode('inner', inner)
      .addEdge(START, 'inner')
      .compile({ checkpointer: saver });
    await app.invoke(
      { messages: [new HumanMessage({ id: 'h1', content: 'hi' })] },
      { configurable: { thread_id: 'sub' } },
    );
    const namespaces = new Set<string>();
    for await (const t of saver.list({ configurable: { thread_id: 'sub' } }))
      namespaces.add(String(t.config.configurable?.checkpoint_ns));
    expect([...namespaces].some((ns) => ns.startsWith('inner:'))).toBe(true);
    const dag = createLangGraphDag({ saver });
    expect(await dag.listSessions()).toEqual(['sub']);
    expect(edges(await read(dag, 'sub'))).toEqual([
      [1, 'h1', 'user', null],
      [2, 'r1', 'assistant', 'h1'],
    ]);
  });

  it('an item of the channel that is no message is INVALID_NODE; a DeltaChannel, whose messages are not in the checkpoints, INVALID_OPTION', async () => {
    const saver = new MemorySaver();
    const Odd = Annotation.Root({
      messages: Annotation<unknown[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
    });
    const odd = new StateGraph(Odd)
      .addNode('noop', async () => ({}))
      .addEdge(START, 'noop')
      .compile({ checkpointer: saver });
    await odd.invoke(
      { messages: [new HumanMessage({ id: 'h1', content: 'hi' }), 42] },
      { configurable: { thread_id: 'odd' } },
    );
    const dag = createLangGraphDag({ saver });
    await expect(read(dag, 'odd')).rejects.toMatchObject({
      name: 'EntityGitError',
      code: 'INVALID_NODE',
      data: { threadId: 'odd', index: 1 },
    });

    const model = new ScriptedChatModel(replies('r1'));
    const Delta = Annotation.Root({ messages: new DeltaChannel(messagesDeltaReducer) });
    const delta = new StateGraph(Delta)
      .addNode('agent', async (s) => ({ messages: [await model.invoke(s.messages as BaseMessage[])] }))
      .addEdge(START, 'agent')
      .compile({ checkpointer: saver });
    await delta.invoke(
      { messages: [new HumanMessage({ id: 'h1', content: 'hi' })] },
      { configurable: { thread_id: 'delta' } },
    );
    await expect(read(dag, 'delta')).rejects.toMatchObject({ code: 'INVALID_OPTION', data: { channel: 'messages' } });
    await expect(dag.getSession('delta')).rejects.toMatchObject({ code: 'INVALID_OPTION' });
  });

  it('reads assistant tool calls in any shape LangChain stores: parallel calls ride on their caller, an unanswered call id makes a plain tool node', async () => {
    const saver = new MemorySaver();
    const app = new StateGraph(MessagesAnnotation)
      .addNode('noop', async () => ({}))
      .addEdge(START, 'noop')
      .compile({ checkpointer: saver });
    await app.invoke(
      {
        messages: [
          new HumanMessage({ id: 'h1', content: 'go' }),
          new AIMessage({
            id: 'a1',
            content: [{ type: 'text', text: 'Two lookups.' }],
            tool_calls: [
              { id: 'x', name: 'read', args: {} },
              { id: 'y', name: 'grep', args: { q: 1 } },
            ],
          }),
          { role: 'tool', content: 'file', tool_call_id: 'x', id: 't1' },
          { role: 'tool', content: 'hit', tool_call_id: 'y', id: 't2' },
          { role: 'tool', content: 'stray', tool_call_id: 'nobody', id: 't3' },
          new AIMessage({ id: 'a2', content: 'Done.' }),
        ],
      },
      { configurable: { thread_id: 'calls' } },
    );
    const nodes = await read(createLangGraphDag({ saver }), 'calls');
    expect(
      nodes.map((n) => [n.id, n.role, n.predecessor, n.caller, (n.metadata as { tool?: string }).tool ?? null]),
    ).toEqual([
      ['h1', 'user', null, null, null],
      ['a1', 'assistant', 'h1', null, null],
      ['t1', 'tool', 'a1', 'a1', 'read'],
      ['t2', 'tool', 'a1', 'a1', 'grep'],
      ['t3', 'tool', 'a1', null, null],
      ['a2', 'assistant', 't3', null, null],
    ]);
    const repo = await mirrored(saver, 'calls');
    expect(Object.keys(branches(repo))).toEqual(['main']);
    expect(commits(repo, 'main')[0]!.message.split('\n').slice(0, 4)).toEqual([
      'turn 1: go',
      '',
      'assistant: Done.',
      'tools: read, grep',
    ]);
  });
});
