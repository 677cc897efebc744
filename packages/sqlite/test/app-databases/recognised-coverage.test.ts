// What the facts of each recognised store describe beyond the main fixtures: OpenCode's every
// part type (a file on the prompt, patch, subtask, agent, retry and compaction parts, a tool that
// failed), the Agents SDK's `pop_item` (an undo), and Open WebUI's archived chats, times in
// milliseconds, content as parts and reasoning items in `output`. Each asserts the exact commits.
import { join } from 'node:path';
import { reconcile } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/index.js';
import { tempDir } from '../helpers/temp.js';
import {
  AGENTS_DDL,
  CHAT_COLUMNS,
  OPENCODE_DDL,
  T0,
  WEBUI_MESSAGES_DDL,
  agentsInsert,
  make,
  opencodeInserts,
} from './fixtures/recognised-stores.js';
import { webuiCoverageRows } from './fixtures/webui-coverage.js';
import { tablesHash } from './fixtures/table-hash.js';
import { assertHealthy, backfill, git, refsOf, repoFacts } from './repo-facts.js';

const tmp = tempDir('entity-git-recognised-coverage-');
afterAll(() => tmp.remove());

const trailer = (session: string, node: string, seq: number, turn: number) =>
  `\n\nSession: ${session}\nTurn: ${turn}\nNode: ${node}\nSeq: ${seq}`;
const q = (v: unknown) => `'${(typeof v === 'string' ? v : JSON.stringify(v)).replace(/'/g, "''")}'`;
const ms = (s: number) => (T0 + s) * 1000;

/** A store made, recognised as `schema`, every session mirrored; its tables unchanged. */
async function mirrored(name: string, statements: string[], schema: string) {
  const file = join(tmp.dir, `${name}.sqlite`);
  make(file, statements);
  const before = tablesHash(file);
  const store = await openSqlite({ file });
  expect(store.recognised).toBe(schema);
  const root = join(tmp.dir, `${name}-root`);
  const report = await reconcile({ dag: store.dag, mirror: createNodeMirror({ dag: store.dag, root }) });
  await store.close();
  expect(tablesHash(file)).toBe(before);
  return { file, root, actions: report.entries.map((e) => [e.sessionId, e.action]) };
}

describe('OpenCode: every part type the facts name', () => {
  it('the reply is its text parts, its tools every tool part (a failed one too), its tokens every step-finish; other parts kept out of the reply', async () => {
    const step = (input: number, output: number) => ({
      type: 'step-finish',
      reason: 'stop',
      cost: 0,
      tokens: { input, output, reasoning: 0, cache: { read: 0, write: 0 } },
    });
    const messages = [
      {
        id: 'msg_c00000000001',
        t: 1,
        data: { role: 'user', time: { created: ms(1) }, agent: 'build' },
        parts: [
          { type: 'text', text: 'Refactor a.ts' },
          { type: 'file', mime: 'text/plain', filename: 'a.ts', url: 'file:///work/app/a.ts' },
        ],
      },
      {
        id: 'msg_c00000000002',
        t: 2,
        data: {
          role: 'assistant',
          parentID: 'msg_c00000000001',
          time: { created: ms(2), completed: ms(9) },
          modelID: 'large',
          providerID: 'acme',
          finish: 'stop',
          tokens: { input: 20, output: 7, reasoning: 0, cache: { read: 0, write: 0 } },
        },
        parts: [
          { type: 'step-start' },
          { type: 'reasoning', text: 'Look first.' },
          {
            type: 'tool',
            callID: 'c1',
            tool: 'read',
            state: {
              status: 'completed',
              input: { filePath: 'a.ts' },
              output: 'x',
              time: { start: ms(2), end: ms(2) },
            },
          },
          {
            type: 'tool',
            callID: 'c2',
            tool: 'bash',
            state: {
              status: 'error',
              input: { command: 'npm test' },
              error: 'exit 1',
              time: { start: ms(3), end: ms(4) },
            },
          },
          { type: 'retry', attempt: 1, error: { name: 'APIError', data: { message: 'overloaded' } } },
          { type: 'subtask', prompt: 'Find callers', description: 'callers', agent: 'explore' },
          { type: 'agent', name: 'explore' },
          { type: 'patch', hash: 'abc123', files: ['/work/app/a.ts'] },
          { type: 'compaction', auto: true },
          step(10, 5),
          { type: 'step-start' },
          { type: 'text', text: 'Refactored; ' },
          { type: 'text', text: 'the tests fail as before.' },
          step(20, 7),
        ],
      },
    ];
    const { root } = await mirrored(
      'opencode-parts',
      [
        ...OPENCODE_DDL,
        `insert into session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated)
         values ('ses_p', 'prj_1', null, 'slug', '/work/app', 'Refactor', '1.2.0', ${ms(0)}, ${ms(0)})`,
        ...messages.flatMap((m) => opencodeInserts('ses_p', m)),
      ],
      'opencode',
    );
    const repo = join(root, 'ses_p');
    assertHealthy(repo);
    const facts = repoFacts(repo);
    expect(facts.branches.main!.files).toEqual([
      'messages/000001-u-msg_c00000000001.json',
      'messages/000002-a-msg_c00000000002.json',
      'meta.json',
    ]);
    expect(facts.branches.main!.messages).toEqual([
      `turn 1: Refactor a.ts\n\nassistant: Refactored; the tests fail as before.\ntools: read, bash\n\n[meta: turn took 1.0s, 2 tools, 42 tokens]${trailer('ses_p', 'msg_c00000000002', 2, 1)}`,
    ]);
    const reply = JSON.parse(git(repo, 'show', 'main:messages/000002-a-msg_c00000000002.json'));
    expect([reply.content, reply.metadata.row.reasoning, reply.metadata.inline_tools]).toEqual([
      'Refactored; the tests fail as before.',
      'Look first.',
      ['read', 'bash'],
    ]);
  });
});

describe("the Agents SDK's pop_item", () => {
  it('the newest row deleted: the turn is committed again without it, the old commit kept in the reflog, as a fresh backfill', async () => {
    const items: [number, unknown][] = [
      [1, { role: 'user', content: 'Hi' }],
      [2, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello.' }] }],
      [60, { role: 'user', content: 'Again' }],
      [61, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello again.' }] }],
    ];
    const { file, root } = await mirrored(
      'agents-pop',
      [
        ...AGENTS_DDL,
        `insert into agent_sessions (session_id) values ('conv_p')`,
        ...items.map(([t, item]) => agentsInsert('conv_p', t, item)),
      ],
      'openai-agents',
    );
    const repo = join(root, 'conv_p');
    const before = git(repo, 'rev-parse', 'main');
    expect(repoFacts(repo).branches.main!.messages.at(-1)).toBe(
      `turn 2: Again\n\nassistant: Hello again.\n\n[meta: turn took 1.0s]${trailer('conv_p', '4', 4, 2)}`,
    );
    const app = new Database(file);
    app.exec(`delete from agent_messages where id = (select max(id) from agent_messages where session_id = 'conv_p')`);
    app.close();
    const store = await openSqlite({ file });
    const report = await reconcile({ dag: store.dag, mirror: createNodeMirror({ dag: store.dag, root }) });
    const fresh = join(tmp.dir, 'agents-pop-fresh');
    await backfill(store.dag, fresh);
    await store.close();
    expect(report.entries.map((e) => [e.sessionId, e.action])).toEqual([['conv_p', 'repaired']]);
    const facts = repoFacts(repo);
    expect(facts.branches.main!.commits).toBe(2);
    expect(facts.branches.main!.messages.at(-1)).toBe(
      `turn 2: Again\n\n[meta: turn took 0.0s]${trailer('conv_p', '3', 3, 2)}`,
    );
    expect(git(repo, 'reflog', '--format=%H', 'main').split('\n')).toContain(before);
    expect(refsOf(repo)).toEqual(refsOf(join(fresh, 'conv_p')));
    assertHealthy(repo);
  });
});

describe('Open WebUI: archived chats, times in milliseconds, content as parts, reasoning in output', () => {
  it('an archived chat with times in ms is mirrored in seconds; a chat_message row with text parts and a reasoning item keeps the reasoning out of the reply', async () => {
    const { root, actions } = await mirrored(
      'webui-coverage',
      [...WEBUI_MESSAGES_DDL, ...webuiCoverageRows()],
      'open-webui-messages',
    );
    expect(actions).toEqual([
      ['w5', 'backfilled'],
      ['w6', 'backfilled'],
    ]);
    const archived = repoFacts(join(root, 'w5'));
    expect(archived.branches.main!.messages).toEqual([
      `turn 1: Old question\n\nassistant: Old answer\n\n[meta: turn took 2.0s]${trailer('w5', 'w5-a2', 2, 1)}`,
    ]);
    expect(git(join(root, 'w5'), 'log', '-1', '--format=%ct', 'main')).toBe(String(T0 + 3));
    expect(JSON.parse(git(join(root, 'w5'), 'show', 'refs/entity-git/meta:session.json'))).toMatchObject({
      title: 'Archived',
      created_at: T0,
    });
    const parts = repoFacts(join(root, 'w6'));
    expect(parts.head).toBe('main');
    expect(parts.branches.main!.messages).toEqual([
      `turn 1: Why is the sky blue?\n\nassistant: Scattering.\n\n[meta: turn took 2.0s]${trailer('w6', 'w6-c2', 2, 1)}`,
    ]);
    assertHealthy(join(root, 'w5'));
    assertHealthy(join(root, 'w6'));
  });

  it('the chat table: an archived chat is a session like any other', async () => {
    const { actions } = await mirrored(
      'webui-archived',
      [
        `create table chat (${CHAT_COLUMNS})`,
        `insert into chat (id, user_id, title, chat, created_at, updated_at, archived, pinned)
         values ('w7', 'u1', 'Gone', ${q({ history: { currentId: 'x1', messages: { x1: { id: 'x1', parentId: null, childrenIds: [], role: 'user', content: 'Bye', timestamp: T0 + 1 } } } })}, ${T0}, ${T0}, true, false)`,
      ],
      'open-webui',
    );
    expect(actions).toEqual([['w7', 'backfilled']]);
  });
});
