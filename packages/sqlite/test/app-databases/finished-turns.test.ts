// No finished turn left behind: a flat-DAG reply whose tool calls carry their results is complete,
// a turn a crashed host left open is committed once the session is quiet (and again when rows
// follow), and a session with no row in the messages table is reported `empty`.
import { join } from 'node:path';
import { reconcile } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/index.js';
import { tempDir } from '../helpers/temp.js';
import { FlatDagApp } from './fixtures/flat-dag-db.js';
import { MessagesApp, T0 } from './fixtures/messages-db.js';
import { tablesHash } from './fixtures/table-hash.js';
import { assertHealthy, backfill, git, refsOf, repoFacts } from './repo-facts.js';

const tmp = tempDir('entity-git-app-finished-');
afterAll(() => tmp.remove());

const llm = (text: string, metadata: Record<string, unknown>) => ({
  name: 'model-x',
  input: null,
  output: text,
  called_by: null,
  reads: [],
  metadata,
});
const user = (text: string) => ({ name: 'user', input: null, output: text, called_by: null, reads: [], metadata: {} });

/** Session `e1`: a turn whose reply ran its tools inside its own row, no `code` row. */
function embeddedCalls(app: FlatDagApp): void {
  app.createSession('e1', 0);
  app.node('e1', 'q1', 'user', {}, user('Weather and time in Paris?'), 1);
  app.node(
    'e1',
    'r1',
    'llm',
    { predecessor: 'q1' },
    llm('Sunny, and it is noon.', {
      tool_calls: [
        { id: 'c1', name: 'get_weather', input: { city: 'Paris' }, result: 'sunny' },
        { id: 'c2', function: { name: 'get_time' }, input: { city: 'Paris' }, output: '12:00' },
        { id: 'c3', name: 'get_weather', input: { city: 'Lyon' }, result: 'rain' },
      ],
      input_tokens: 300,
      output_tokens: 20,
    }),
    3,
  );
}

const trailer = (node: string, seq: number, turn: number) => [
  '',
  'Session: e1',
  `Turn: ${turn}`,
  `Node: ${node}`,
  `Seq: ${seq}`,
];

describe('a flat-DAG reply whose tool calls carry their results, with no code rows', () => {
  it('is a complete turn, committed while it is the last one, its calls on the tools: line', async () => {
    const file = join(tmp.dir, 'embedded.sqlite');
    const app = new FlatDagApp(file, { create: true });
    embeddedCalls(app);
    const root = join(tmp.dir, 'embedded-live');
    // No quiet time: only the rule for calls decides.
    const store = await openSqlite({ file, quietMs: Number.POSITIVE_INFINITY });
    expect(store.recognised).toBe('flat-dag');
    const mirror = createNodeMirror({ dag: store.dag, root });
    expect((await mirror.sync('e1')).commitsWritten).toBe(1);
    app.node('e1', 'q2', 'user', { predecessor: 'r1' }, user('Thanks'), 10);
    app.node(
      'e1',
      'r2',
      'llm',
      { predecessor: 'q2' },
      llm('You are welcome.', { input_tokens: 330, output_tokens: 4 }),
      11,
    );
    const before = tablesHash(file);
    const report = await reconcile({ dag: store.dag, mirror, sessions: ['e1'] });
    expect(report.entries.map((e) => e.action)).toEqual(['repaired']);
    const repo = join(root, 'e1');
    assertHealthy(repo);
    const facts = repoFacts(repo);
    expect(Object.keys(facts.branches)).toEqual(['main']);
    expect(facts.head).toBe('main');
    expect(facts.branches.main!.files).toEqual([
      'messages/000001-u-q1.json',
      'messages/000002-a-r1.json',
      'messages/000003-u-q2.json',
      'messages/000004-a-r2.json',
      'meta.json',
    ]);
    expect(facts.branches.main!.messages).toEqual([
      [
        'turn 1: Weather and time in Paris?',
        '',
        'assistant: Sunny, and it is noon.',
        'tools: get_weather × 2, get_time',
        '',
        '[meta: turn took 2.0s, 3 tools, 320 tokens]',
        ...trailer('r1', 2, 1),
      ].join('\n'),
      [
        'turn 2: Thanks',
        '',
        'assistant: You are welcome.',
        '',
        '[meta: turn took 1.0s, 334 tokens]',
        ...trailer('r2', 4, 2),
      ].join('\n'),
    ]);
    expect(JSON.parse(git(repo, 'show', 'main:messages/000002-a-r1.json')).metadata.inline_tools).toEqual([
      'get_weather',
      'get_time',
      'get_weather',
    ]);
    // A fresh backfill of the same rows gives the same commits.
    const fresh = join(tmp.dir, 'embedded-fresh');
    await backfill(store.dag, fresh);
    expect(refsOf(join(fresh, 'e1'))).toEqual(refsOf(repo));
    await store.close();
    app.close();
    expect(tablesHash(file)).toBe(before);
  });

  it('a call with no result in its row still waits for its code row', async () => {
    const file = join(tmp.dir, 'waiting.sqlite');
    const app = new FlatDagApp(file, { create: true });
    app.createSession('w1', 0);
    app.node('w1', 'q1', 'user', {}, user('Read a.ts'), 1);
    app.node('w1', 'r1', 'llm', { predecessor: 'q1' }, llm('', { tool_calls: [{ id: 'c1', name: 'read' }] }), 2);
    const store = await openSqlite({ file, quietMs: Number.POSITIVE_INFINITY });
    const mirror = createNodeMirror({ dag: store.dag, root: join(tmp.dir, 'waiting') });
    expect((await mirror.sync('w1')).commitsWritten).toBe(0);
    await store.close();
    app.close();
  });
});

describe('the quiet time: a turn a crashed host left open', () => {
  it('is committed once the session is quiet, again when rows follow, as a fresh backfill at each step', async () => {
    const file = join(tmp.dir, 'crashed.sqlite');
    const app = new MessagesApp(file, { create: true });
    app.createSession('s1', 0);
    app.user('s1', 'u1', null, 'List the files', 5);
    app.assistant('s1', 'a1', 'u1', 'Two files.', 6, { input: 100, output: 5 });
    app.user('s1', 'u2', 'a1', 'Read them', 20); // the host died before the reply
    let now = T0 + 60; // under a minute after the prompt
    const clock = () => now;
    const store = await openSqlite({ file, now: clock });
    const root = join(tmp.dir, 'crashed');
    const mirror = createNodeMirror({ dag: store.dag, root });
    const first = await reconcile({ dag: store.dag, mirror });
    expect(first.entries.map((e) => e.action)).toEqual(['backfilled']);
    const repo = join(root, 's1');
    expect(git(repo, 'rev-list', '--count', 'main')).toBe('1'); // the prompt is held open
    expect(store.dag.quietSessions()).toEqual([]);

    now = T0 + 20 + 301; // five minutes and a second after the newest row
    expect(store.dag.quietSessions()).toEqual(['s1']); // what `watch` syncs again
    // The start-up check: no row changed, but the session's marker says it went quiet.
    const second = await reconcile({ dag: store.dag, mirror });
    expect(second.entries.map((e) => e.action)).toEqual(['repaired']);
    const facts = repoFacts(repo);
    expect(facts.branches.main!.files).toEqual([
      'messages/000001-u-u1.json',
      'messages/000002-a-a1.json',
      'messages/000003-u-u2.json',
      'meta.json',
    ]);
    expect(facts.branches.main!.messages[1]).toBe(
      ['turn 2: Read them', '', '[meta: turn took 0.0s]', '', 'Session: s1', 'Turn: 2', 'Node: u2', 'Seq: 3'].join(
        '\n',
      ),
    );
    // The file holds no pending flag: the bytes a fresh backfill of a quiet session writes.
    expect(Object.keys(JSON.parse(git(repo, 'show', 'main:messages/000003-u-u2.json')).metadata)).toEqual(['row']);
    const quietTip = git(repo, 'rev-parse', 'main');
    const fresh = join(tmp.dir, 'crashed-fresh');
    await backfill(store.dag, fresh);
    expect(refsOf(join(fresh, 's1'))).toEqual(refsOf(repo));
    expect((await reconcile({ dag: store.dag, mirror })).entries.map((e) => e.action)).toEqual(['unchanged']);

    // The host comes back and answers: turn 2 is committed again with its reply.
    app.assistant('s1', 'a2', 'u2', 'One says hello.', now - T0 + 1, { input: 120, output: 4 });
    now += 2;
    await mirror.sync('s1');
    assertHealthy(repo);
    expect(git(repo, 'rev-list', '--count', 'main')).toBe('2');
    expect(git(repo, 'reflog', '--format=%H', 'main').split('\n')).toContain(quietTip);
    const fresh2 = join(tmp.dir, 'crashed-fresh-2');
    await backfill(store.dag, fresh2);
    expect(refsOf(join(fresh2, 's1'))).toEqual(refsOf(repo));
    await store.close();
    app.close();
  });
});

describe('a session with no node', () => {
  it('is reported empty, not backfilled', async () => {
    const file = join(tmp.dir, 'empty.sqlite');
    const app = new FlatDagApp(file, { create: true });
    app.createSession('full', 0);
    app.node('full', 'q1', 'user', {}, user('Hi'), 1);
    app.node('full', 'r1', 'llm', { predecessor: 'q1' }, llm('Hello.', {}), 2);
    app.createSession('none', 5);
    const store = await openSqlite({ file });
    const mirror = createNodeMirror({ dag: store.dag, root: join(tmp.dir, 'empty') });
    const report = await reconcile({ dag: store.dag, mirror });
    expect(report.entries.map((e) => [e.sessionId, e.action])).toEqual([
      ['full', 'backfilled'],
      ['none', 'empty'],
    ]);
    expect(report.ok).toBe(true);
    await store.close();
    app.close();
  });
});
