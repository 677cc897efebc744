import { join } from 'node:path';
import { createNodeMirror } from '@entity-git/node-fs';
import { LibSQLStore } from '@mastra/libsql';
import { afterAll, expect, it } from 'vitest';
import { openMastraSqlite } from '../src/index.js';
import { cleanupDirs, files, git, judged, message, refs, tempDir } from './helpers/git.js';
import { scriptedAgent, turn } from './helpers/mastra-agent.js';

afterAll(cleanupDirs);

const T0 = Date.UTC(2025, 0, 15, 9, 30, 0);
const at = (s: number) => new Date(T0 + s * 1000);

it('format-1 rows (a tool result in a row of its own) and format-2 turns after them make one linear history', async () => {
  const file = join(tempDir(), 'mastra.db');
  const storage = new LibSQLStore({ url: `file:${file}` });
  await storage.init();
  await storage.saveThread({
    thread: { id: 'old', resourceId: 'user-1', title: 'Old', createdAt: at(0), updatedAt: at(0), metadata: {} },
  });
  // Rows as Mastra's message format 1 stored them, written through Mastra's own saveMessages.
  const row = { threadId: 'old', resourceId: 'user-1' };
  await storage.saveMessages({
    format: 'v1',
    messages: [
      { ...row, id: 'm1', role: 'user', type: 'text', content: 'What time is it?', createdAt: at(1) },
      {
        ...row,
        id: 'm2',
        role: 'assistant',
        type: 'tool-call',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'clock', args: {} },
        ],
        createdAt: at(2),
      },
      {
        ...row,
        id: 'm3',
        role: 'tool',
        type: 'tool-result',
        content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'clock', result: 'noon' }],
        createdAt: at(3),
      },
      { ...row, id: 'm4', role: 'assistant', type: 'text', content: 'It is noon.', createdAt: at(5) },
    ] as never,
  });
  // Mastra itself reads the result row as a message holding c1's result.
  const read = await storage.getMessages({ threadId: 'old', format: 'v2' });
  expect(read.map((m) => [m.id, m.role])).toEqual([
    ['m1', 'user'],
    ['m2', 'assistant'],
    ['m3', 'assistant'],
    ['m4', 'assistant'],
  ]);
  expect(read[2]!.content.parts).toMatchObject([
    { type: 'tool-invocation', toolInvocation: { state: 'result', toolCallId: 'c1', result: 'noon' } },
  ]);

  const store = await openMastraSqlite({ file });
  const nodes = [];
  for await (const n of store.dag.nodesAfter('old')) nodes.push(n);
  expect(nodes.map((n) => [n.seq, n.id, n.role, n.predecessor, n.caller, n.content, n.metadata])).toEqual([
    [1, 'm1', 'user', null, null, 'What time is it?', { type: 'text' }],
    [
      2,
      'm2',
      'assistant',
      'm1',
      null,
      [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'clock', args: {} },
      ],
      { type: 'tool-call' },
    ],
    [3, 'm3.c1', 'tool', 'm2', 'm2', 'noon', { tool: 'clock', toolCallId: 'c1', type: 'tool-result' }],
    [4, 'm4', 'assistant', 'm2', null, 'It is noon.', { type: 'text' }],
  ]);

  // The agent goes on in format 2, from the history Mastra reads out of those rows.
  await turn(scriptedAgent(storage), 'old', 'And tomorrow?');
  const mirror = createNodeMirror({ dag: store.dag, root: tempDir() });
  await mirror.sync('old');
  const repo = mirror.repoPath('old');
  expect(Object.keys(refs(repo))).toEqual(['main']);
  expect(files(repo, 'main~1')).toEqual([
    'messages/000001-u-m1.json',
    'messages/000002-a-m2.json',
    'messages/000003-t-m3.c1.json',
    'messages/000004-a-m4.json',
    'meta.json',
  ]);
  expect(message(repo, 'main~1')).toBe(
    [
      'turn 1: What time is it?',
      '',
      'assistant: It is noon.',
      'tools: clock',
      '',
      '[meta: turn took 4.0s, 1 tool]',
      '',
      'Session: old',
      'Turn: 1',
      'Node: m4',
      'Seq: 4',
      '',
      '',
    ].join('\n'),
  );
  expect(git(repo, 'log', '-1', '--format=%at', 'main~1').trim()).toBe(String((T0 + 5000) / 1000));
  expect(message(repo, 'main').split('\n')[0]).toBe('turn 2: And tomorrow?');
  expect(files(repo, 'main').length).toBe(7);
  expect(judged(repo)).toEqual({ fsck: '', status: '' });
  await store.close();
});
