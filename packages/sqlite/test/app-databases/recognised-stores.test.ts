// Three applications' stores, recognised with no configuration and mirrored by the design's
// rules: exact branches, commits, files, messages and HEAD; git fsck clean; the application's
// tables unchanged; a fresh backfill equal to a mirror that followed the rows as they came.
import { join } from 'node:path';
import { reconcile } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/index.js';
import { tempDir } from '../helpers/temp.js';
import {
  AGENTS_ITEMS,
  OPENCODE_MESSAGES,
  agentsInsert,
  agentsSdkDb,
  opencodeDb,
  opencodeInserts,
  openWebuiDb,
  openWebuiMessagesDb,
} from './fixtures/recognised-stores.js';
import { tablesHash } from './fixtures/table-hash.js';
import { assertHealthy, backfill, git, refsOf, repoFacts } from './repo-facts.js';

const tmp = tempDir('entity-git-recognised-');
afterAll(() => tmp.remove());

const trailer = (session: string, node: string, seq: number, turn: number) =>
  `\n\nSession: ${session}\nTurn: ${turn}\nNode: ${node}\nSeq: ${seq}`;

/** The store made, recognised, mirrored by a start-up reconcile; its tables hashed before and after. */
async function mirrorStore(name: string, make: (file: string) => void, schema: string) {
  const file = join(tmp.dir, `${name}.sqlite`);
  make(file);
  const before = tablesHash(file);
  const store = await openSqlite({ file });
  expect(store.recognised).toBe(schema);
  const root = join(tmp.dir, `${name}-root`);
  const report = await reconcile({ dag: store.dag, mirror: createNodeMirror({ dag: store.dag, root }) });
  const sessions = new Map(
    await Promise.all(
      (await store.dag.listSessions()).map(async (id) => [id, await store.dag.getSession(id)] as const),
    ),
  );
  await store.close();
  expect(tablesHash(file)).toBe(before);
  return { file, root, actions: report.entries.map((e) => [e.sessionId, e.action]), sessions };
}

/** Rows written one step at a time, a sync after each, end where a fresh backfill of the final rows does. */
async function followEqualsBackfill(file: string, steps: string[], sessions: string[]) {
  const root = join(tmp.dir, `${file.split('/').at(-1)}-live`);
  for (const step of steps) {
    const app = new Database(file);
    app.exec(step);
    app.close();
    // The application writes as the mirror follows: its rows, dated in the past, are not quiet.
    const store = await openSqlite({ file, quietMs: Number.POSITIVE_INFINITY });
    const mirror = createNodeMirror({ dag: store.dag, root });
    for (const id of sessions) await mirror.sync(id);
    await store.close();
  }
  const store = await openSqlite({ file });
  const fresh = join(tmp.dir, `${file.split('/').at(-1)}-fresh`);
  await backfill(store.dag, fresh);
  // The crashed prompt at the end goes quiet for the follower too: its last sync commits it.
  await reconcile({ dag: store.dag, mirror: createNodeMirror({ dag: store.dag, root }) });
  await store.close();
  for (const id of sessions) {
    expect(refsOf(join(root, id))).toEqual(refsOf(join(fresh, id)));
    assertHealthy(join(root, id));
  }
}

describe('the OpenAI Agents SDK SQLiteSession, with no configuration', () => {
  it('one path of Responses items: tools named from their calls, reasoning apart from the reply, the crashed prompt committed', async () => {
    const { root, actions, sessions } = await mirrorStore('agents', agentsSdkDb, 'openai-agents');
    expect(actions).toEqual([
      ['conv_1', 'backfilled'],
      ['conv_2', 'empty'],
    ]);
    expect(sessions.get('conv_1')?.created_at).toBe(1779500000); // CURRENT_TIMESTAMP text, UTC
    const repo = join(root, 'conv_1');
    assertHealthy(repo);
    const facts = repoFacts(repo);
    expect(facts.head).toBe('main');
    expect(Object.keys(facts.branches)).toEqual(['main']);
    expect(facts.branches.main!.files).toEqual([
      ...['1-u', '2-a', '3-a', '4-t', '5-a', '6-u', '7-a', '8-t', '9-a', '10-u'].map((f) => {
        const [n, r] = f.split('-');
        return `messages/${n!.padStart(6, '0')}-${r}-${n}.json`;
      }),
      'meta.json',
    ]);
    expect(facts.branches.main!.messages).toEqual([
      `turn 1: What is the weather in Paris?\n\nassistant: It is sunny in Paris.\ntools: get_weather\n\n[meta: turn took 3.0s, 1 tool]${trailer('conv_1', '5', 5, 1)}`,
      `turn 2: And in Lyon?\n\nassistant: The weather service is down.\ntools: get_weather\n\n[meta: turn took 3.0s, 1 tool]${trailer('conv_1', '9', 9, 2)}`,
      `turn 3: Thanks!\n\n[meta: turn took 0.0s]${trailer('conv_1', '10', 10, 3)}`,
    ]);
    const reasoning = JSON.parse(git(repo, 'show', 'main:messages/000002-a-2.json'));
    expect([reasoning.content, reasoning.metadata.row.type]).toEqual([null, 'reasoning']);
  });

  it('followed item by item, ends with the ids of a fresh backfill', async () => {
    const file = join(tmp.dir, 'agents-follow.sqlite');
    agentsSdkDb(file, []);
    await followEqualsBackfill(
      file,
      AGENTS_ITEMS.map(([t, item]) => agentsInsert('conv_1', t, item)),
      ['conv_1'],
    );
  });
});

describe("OpenCode's opencode.db, with no configuration", () => {
  it('messages in (time_created, id) order across the id wrap, tools from tool parts, tokens summed over step-finish parts, a sub-agent session of its own', async () => {
    const { root, actions, sessions } = await mirrorStore('opencode', opencodeDb, 'opencode');
    expect(actions).toEqual([
      ['ses_1', 'backfilled'],
      ['ses_2', 'backfilled'],
    ]);
    expect(sessions.get('ses_1')).toMatchObject({
      title: 'Fix the failing test',
      project_id: 'prj_1',
      created_at: 1779500000,
    });
    expect(sessions.get('ses_2')?.metadata).toMatchObject({ parent_id: 'ses_1' });
    const repo = join(root, 'ses_1');
    assertHealthy(repo);
    const facts = repoFacts(repo);
    expect(facts.head).toBe('main');
    expect(Object.keys(facts.branches)).toEqual(['main']);
    expect(facts.branches.main!.files).toEqual([
      'messages/000001-u-msg_a00000000001.json',
      'messages/000002-a-msg_a00000000002.json',
      'messages/000003-a-msg_a00000000003.json',
      'messages/000004-u-msg_000000000004.json',
      'messages/000005-a-msg_000000000005.json',
      'messages/000006-u-msg_000000000006.json',
      'meta.json',
    ]);
    expect(facts.branches.main!.messages).toEqual([
      `turn 1: Fix the failing test\n\nassistant: Fixed: the test expected 2.\ntools: read, edit\n\n[meta: turn took 4.0s, 2 tools, 416 tokens]${trailer('ses_1', 'msg_a00000000003', 3, 1)}`,
      `turn 2: Run the suite\n\nassistant: [error] rate limited\n\n[meta: turn took 1.0s]${trailer('ses_1', 'msg_000000000005', 5, 2)}`,
      `turn 3: Try again\n\n[meta: turn took 0.0s]${trailer('ses_1', 'msg_000000000006', 6, 3)}`,
    ]);
    expect(JSON.parse(git(repo, 'show', 'main:messages/000002-a-msg_a00000000002.json')).metadata.row.reasoning).toBe(
      'Read the test first.',
    );
    expect(repoFacts(join(root, 'ses_2')).branches.main!.messages).toEqual([
      `turn 1: Find the tests\n\nassistant: a.test.ts\n\n[meta: turn took 1.0s, 43 tokens]${trailer('ses_2', 'msg_b00000000002', 2, 1)}`,
    ]);
  });

  it('followed message by message, ends with the ids of a fresh backfill', async () => {
    const file = join(tmp.dir, 'opencode-follow.sqlite');
    opencodeDb(file, []);
    await followEqualsBackfill(
      file,
      OPENCODE_MESSAGES.map((m) => opencodeInserts('ses_1', m).join(';\n')),
      ['ses_1', 'ses_2'],
    );
  });
});

describe('Open WebUI, with no configuration', () => {
  const w1 = {
    head: 'fork-w1-m6',
    branches: ['fork-w1-m6', 'main', 'retry-w1-m3'],
    files: {
      main: ['000001-u-w1-m1', '000002-a-w1-m2', '000004-u-w1-m4', '000005-a-w1-m5'],
      'retry-w1-m3': ['000001-u-w1-m1', '000003-a-w1-m3'],
      'fork-w1-m6': ['000001-u-w1-m1', '000002-a-w1-m2', '000006-u-w1-m6', '000007-a-w1-m7', '000008-u-w1-m8'],
    } as Record<string, string[]>,
    forkMessages: [
      `turn 1: Name a colour\n\nassistant: Blue.\n\n[meta: turn took 1.0s, 12 tokens]${trailer('w1', 'w1-m2', 2, 1)}`,
      `turn 2: Another, in French\n\nassistant: [error] model not found\n\n[meta: turn took 1.0s]${trailer('w1', 'w1-m7', 7, 2)}`,
      `turn 3: Hello?\n\n[meta: turn took 0.0s]${trailer('w1', 'w1-m8', 8, 3)}`,
    ],
  };

  function assertTree(repo: string): void {
    assertHealthy(repo);
    const facts = repoFacts(repo);
    expect(facts.head).toBe(w1.head);
    expect(Object.keys(facts.branches).sort()).toEqual(w1.branches);
    for (const [branch, files] of Object.entries(w1.files))
      expect(facts.branches[branch]!.files).toEqual([...files.map((f) => `messages/${f}.json`), 'meta.json']);
    expect(facts.branches['fork-w1-m6']!.messages).toEqual(w1.forkMessages);
    expect(facts.branches.main!.commits).toBe(2);
    expect(JSON.parse(git(repo, 'show', 'refs/entity-git/meta:session.json'))).toMatchObject({ title: 'Colours' });
  }

  it('the chat table: the JSON tree per chat, a regenerated reply and an edited prompt as branches, HEAD from history.currentId', async () => {
    const { root, actions } = await mirrorStore('webui', openWebuiDb, 'open-webui');
    expect(actions).toEqual([
      ['w1', 'backfilled'],
      ['w0', 'empty'],
    ]);
    assertTree(join(root, 'w1'));
  });

  it('the chat_message table: rows with tools in output, and a chat from before the table read from its tree with the same ids', async () => {
    const { root, actions } = await mirrorStore('webui-messages', openWebuiMessagesDb, 'open-webui-messages');
    expect(actions).toEqual([
      ['w1', 'backfilled'],
      ['w2', 'backfilled'],
    ]);
    assertTree(join(root, 'w1'));
    expect(refsOf(join(root, 'w1'))).toEqual(refsOf(join(tmp.dir, 'webui-root', 'w1')));
    const facts = repoFacts(join(root, 'w2'));
    expect(facts.head).toBe('main');
    expect(facts.branches.main!.messages).toEqual([
      `turn 1: Weather in Oslo?\n\nassistant: Cold and clear.\ntools: get_weather\n\n[meta: turn took 1.0s, 1 tool]${trailer('w2', 'w2-b2', 2, 1)}`,
    ]);
  });
});
