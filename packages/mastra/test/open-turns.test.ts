import { join } from 'node:path';
import { createNodeMirror } from '@entity-git/node-fs';
import { LibSQLStore } from '@mastra/libsql';
import { afterAll, describe, expect, it } from 'vitest';
import { openMastraSqlite, type MastraStore } from '../src/index.js';
import { cleanupDirs, commitCount, git, judged, refs, tempDir } from './helpers/git.js';

afterAll(cleanupDirs);

const T0 = Date.UTC(2025, 5, 1, 8, 0, 0);
const at = (s: number) => new Date(T0 + s * 1000);
const base = { threadId: 'live', resourceId: 'user-1', type: 'v2' as const };
const user = (id: string, s: number, text: string) => ({
  ...base,
  id,
  role: 'user' as const,
  createdAt: at(s),
  content: { format: 2 as const, parts: [{ type: 'text' as const, text }] },
});
/** The reply `a1` as an application saving every step of a run through Mastra's API stores it. */
const reply = (parts: unknown[]) => ({
  ...base,
  id: 'a1',
  role: 'assistant' as const,
  createdAt: at(2),
  content: { format: 2 as const, parts },
});
const call = { state: 'call', toolCallId: 'c1', toolName: 'weather', args: { city: 'Oslo' } };
const done = { ...call, state: 'result', result: { sky: 'snow' } };

describe('a turn still waiting for the model is not committed until it is complete', () => {
  let store: MastraStore | undefined;
  afterAll(() => store?.close());

  it('a prompt, its call, its result, then the text: one commit, made once; main never moves sideways', async () => {
    const file = join(tempDir(), 'mastra.db');
    const storage = new LibSQLStore({ url: `file:${file}` });
    await storage.init();
    await storage.saveThread({
      thread: { id: 'live', resourceId: 'user-1', title: 'Live', createdAt: at(0), updatedAt: at(0), metadata: {} },
    });
    store = await openMastraSqlite({ file });
    const mirror = createNodeMirror({ dag: store.dag, root: tempDir() });
    const stages = [
      [user('u1', 1, 'Weather in Oslo?')],
      [reply([{ type: 'tool-invocation', toolInvocation: call }])],
      [reply([{ type: 'tool-invocation', toolInvocation: done }])],
      [
        reply([
          { type: 'tool-invocation', toolInvocation: done },
          { type: 'step-start' },
          { type: 'text', text: 'Snow.' },
        ]),
      ],
      [user('u2', 3, 'Thanks')],
    ];
    const written: number[] = [];
    for (const messages of stages) {
      await storage.saveMessages({ messages: messages as never, format: 'v2' });
      written.push((await mirror.sync('live')).commitsWritten);
    }
    expect(written).toEqual([0, 0, 0, 1, 0]);
    const repo = mirror.repoPath('live');
    expect(commitCount(repo, 'main')).toBe(1);
    // Each stage replaced the same row (Mastra upserts by id): the commit holds the last one.
    expect(JSON.parse(git(repo, 'show', 'main:messages/000002-a-a1.json')).content).toEqual([
      { type: 'tool-invocation', toolInvocation: { ...call, state: 'result' } },
      { type: 'step-start' },
      { type: 'text', text: 'Snow.' },
    ]);
    expect(git(repo, 'show', 'main:messages/000003-t-a1.c1.json')).toContain('"sky": "snow"');
    expect(git(repo, 'reflog', 'show', '--format=%H', 'main').trim().split('\n')).toEqual([refs(repo).main]);

    // A fresh backfill of the same rows gives the same commit.
    const fresh = createNodeMirror({ dag: store.dag, root: tempDir() });
    await fresh.sync('live');
    expect(refs(fresh.repoPath('live'))).toEqual(refs(repo));
    expect(judged(repo)).toEqual({ fsck: '', status: '' });

    // The prompt waiting for its reply is marked pending in what the source yields.
    const last = [];
    for await (const n of store.dag.nodesAfter('live', 3)) last.push(n);
    expect(last.map((n) => [n.id, n.metadata])).toEqual([['u2', { pending: true }]]);
  });

  it('waitForReplies: false commits every turn as it stands', async () => {
    const file = join(tempDir(), 'mastra.db');
    const s = new LibSQLStore({ url: `file:${file}` });
    await s.init();
    await s.saveThread({
      thread: { id: 'live', resourceId: 'user-1', title: 'Live', createdAt: at(0), updatedAt: at(0), metadata: {} },
    });
    await s.saveMessages({
      messages: [
        user('u1', 1, 'Weather in Oslo?'),
        reply([{ type: 'tool-invocation', toolInvocation: call }]),
      ] as never,
      format: 'v2',
    });
    const held = await openMastraSqlite({ file });
    const open = await openMastraSqlite({ file, waitForReplies: false });
    const a = createNodeMirror({ dag: held.dag, root: tempDir() });
    const b = createNodeMirror({ dag: open.dag, root: tempDir() });
    expect((await a.sync('live')).commitsWritten).toBe(0);
    expect((await b.sync('live')).commitsWritten).toBe(1);
    expect(git(b.repoPath('live'), 'log', '-1', '--format=%s', 'main').trim()).toBe('turn 1: Weather in Oslo?');
    await held.close();
    await open.close();
  });
});
