import { join } from 'node:path';
import type { DagNode } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { createLangGraphDag } from '../src/index.js';
import { agent } from './helpers/agent.js';
import { branches, commits, fsck, git, removeTempDirs, tempDir } from './helpers/git.js';

afterAll(removeTempDirs);

const SCRIPT = [
  { id: 'a1', content: '', tool_calls: [{ id: 'c1', name: 'weather', args: { city: 'Oslo' } }] },
  { id: 'a2', content: 'Sunny.' },
  { id: 'a3', content: 'Windy too.' },
  { id: 'a4', content: 'In Bergen it rains.' },
];

/** The session as a fresh source and mirror backfill it from the same store, in another root. */
async function backfill(file: string, threadId: string) {
  const saver = SqliteSaver.fromConnString(file);
  const mirror = createNodeMirror({ dag: createLangGraphDag({ saver }), root: tempDir() });
  await mirror.sync(threadId);
  const repo = mirror.repoPath(threadId);
  const out = { branches: branches(repo), head: git(repo, 'symbolic-ref', 'HEAD') };
  saver.db.close();
  return out;
}

async function read(dag: ReturnType<typeof createLangGraphDag>, threadId: string): Promise<DagNode[]> {
  const out: DagNode[] = [];
  for await (const n of dag.nodesAfter(threadId)) out.push(n);
  return out;
}

describe('mirroring a thread while the agent runs', () => {
  it('syncs each new turn and time travel incrementally, with the ids of a fresh backfill; the marker moves with every write only', async () => {
    const file = join(tempDir(), 'checkpoints.sqlite');
    const saver = SqliteSaver.fromConnString(file);
    // Tool results keep the ids LangGraph gives them (random): the backfill reads the same store.
    const app = agent(saver, SCRIPT, { randomToolIds: true });
    const thread = { configurable: { thread_id: 'live' } };
    const dag = createLangGraphDag({ saver });
    const mirror = createNodeMirror({ dag, root: tempDir() });
    const repo = mirror.repoPath('live');

    expect(await dag.changeMarker('live')).toBeNull();
    await app.invoke({ messages: [new HumanMessage({ id: 'h1', content: 'Weather in Oslo?' })] }, thread);
    const m1 = await dag.changeMarker('live');
    expect(m1).not.toBeNull();
    expect(await dag.changeMarker('live')).toBe(m1);
    expect((await mirror.sync('live')).commitsWritten).toBe(1);
    // Every read after a write gives the nodes of the read before it, unchanged, then new ones.
    const reads = [await read(dag, 'live')];
    expect(await backfill(file, 'live')).toEqual({ branches: branches(repo), head: git(repo, 'symbolic-ref', 'HEAD') });
    expect((await mirror.verify('live', { quick: true })).unchanged).toBe(true);

    await app.invoke({ messages: [new HumanMessage({ id: 'h2', content: 'And the wind?' })] }, thread);
    const m2 = await dag.changeMarker('live');
    expect(m2).not.toBe(m1);
    expect((await mirror.verify('live', { quick: true })).unchanged).toBeUndefined();
    const second = await mirror.sync('live');
    expect([second.commitsWritten, second.nodesRead, second.derivation]).toEqual([1, 2, 'extended']);
    expect(commits(repo, 'main').length).toBe(2);
    reads.push(await read(dag, 'live'));
    expect(await backfill(file, 'live')).toEqual({ branches: branches(repo), head: git(repo, 'symbolic-ref', 'HEAD') });

    // Time travel: a question sent from the end of turn 1.
    const history = [];
    for await (const s of app.getStateHistory(thread)) history.push(s);
    const endOfTurn1 = history.find(
      (s) => (s.values.messages as BaseMessage[]).at(-1)?.id === 'a2' && s.next.length === 0,
    )!;
    const forked = await app.updateState(
      endOfTurn1.config,
      { messages: [new HumanMessage({ id: 'h3', content: 'And Bergen?' })] },
      '__start__',
    );
    await app.invoke(null, forked);
    expect(await dag.changeMarker('live')).not.toBe(m2);
    const third = await mirror.sync('live');
    expect(third.branchesMoved).toEqual(['fork-h3']);
    expect(third.head).toBe('fork-h3');
    reads.push(await read(dag, 'live'));
    expect(reads.map((r) => r.length)).toEqual([4, 6, 8]);
    for (let i = 1; i < reads.length; i++) expect(reads[i]!.slice(0, reads[i - 1]!.length)).toEqual(reads[i - 1]);
    expect(await read(createLangGraphDag({ saver }), 'live')).toEqual(reads.at(-1));
    expect(Object.keys(branches(repo)).sort()).toEqual(['fork-h3', 'main']);
    expect(await backfill(file, 'live')).toEqual({ branches: branches(repo), head: git(repo, 'symbolic-ref', 'HEAD') });
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(fsck(repo)).toBe('');
    expect((await mirror.sync('live')).noop).toBe(true);
    saver.db.close();
  });

  it('holds back a turn LangGraph has not finished (an interrupt before the tools) and commits it once, when the run resumes', async () => {
    const file = join(tempDir(), 'checkpoints.sqlite');
    const saver = SqliteSaver.fromConnString(file);
    const app = agent(saver, SCRIPT, { interruptBeforeTools: true });
    const thread = { configurable: { thread_id: 'hitl' } };
    const dag = createLangGraphDag({ saver });
    const mirror = createNodeMirror({ dag, root: tempDir() });

    await app.invoke({ messages: [new HumanMessage({ id: 'h1', content: 'Weather in Oslo?' })] }, thread);
    expect((await app.getState(thread)).next).toEqual(['tools']);
    const waiting = await read(dag, 'hitl');
    expect(waiting.map((n) => [n.id, (n.metadata as { pending?: boolean }).pending ?? false])).toEqual([
      ['h1', false],
      ['a1', true],
    ]);
    const held = await mirror.sync('hitl');
    expect(held.commitsWritten).toBe(0);
    expect(held.branchesMoved).toEqual([]);

    await app.invoke(null, thread);
    expect((await app.getState(thread)).next).toEqual([]);
    expect((await read(dag, 'hitl')).map((n) => n.metadata as { pending?: boolean }).some((m) => m.pending)).toBe(
      false,
    );
    const done = await mirror.sync('hitl');
    expect(done.commitsWritten).toBe(1);
    const repo = mirror.repoPath('hitl');
    expect(commits(repo, 'main').map((c) => c.message.split('\n')[0])).toEqual(['turn 1: Weather in Oslo?']);
    expect(git(repo, 'reflog', '--format=%H', 'main').trim().split('\n')).toHaveLength(1);
    expect(await backfill(file, 'hitl')).toEqual({ branches: branches(repo), head: git(repo, 'symbolic-ref', 'HEAD') });
    saver.db.close();
  });
});
