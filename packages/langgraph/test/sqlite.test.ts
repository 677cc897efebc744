import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createNodeMirror } from '@entity-git/node-fs';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { createLangGraphDag } from '../src/index.js';
import { branches, commits, files, fsck, git, removeTempDirs, tempDir } from './helpers/git.js';
import { sqliteRows } from './helpers/sqlite-rows.js';
import { runTrip, T0, TRIP } from './helpers/trip.js';

afterAll(removeTempDirs);

const trailers = (node: string, seq: number, turn: number) =>
  `Session: trip\nTurn: ${turn}\nNode: ${node}\nSeq: ${seq}`;
const TURN_1 = [
  "turn 1: What's the weather in Oslo and Bergen?",
  '',
  'assistant: Sunny in Oslo, rain in Bergen.',
  'tools: weather × 2',
  '',
  '[meta: turn took 4.0s, 2 tools, 72 tokens]',
  '',
  trailers('a2', 5, 1),
].join('\n');
const FIRST_FIVE = [
  '000001-u-h1.json',
  '000002-a-a1.json',
  '000003-t-t-c1.json',
  '000004-t-t-c2.json',
  '000005-a-a2.json',
];

describe('a LangGraph agent on the SQLite checkpointer, mirrored', () => {
  it('gives a branch per time travel, the turns, messages and files of each, HEAD on the thread head, and writes nothing into the checkpointer', async () => {
    const dir = tempDir();
    const file = join(dir, 'checkpoints.sqlite');
    const writer = SqliteSaver.fromConnString(file);
    await runTrip(writer);
    writer.db.close();

    const before = sqliteRows(file);
    expect(Object.keys(before)).toEqual(['checkpoints', 'writes']);
    const saver = SqliteSaver.fromConnString(file);
    const dag = createLangGraphDag({ saver });
    const root = join(dir, 'sessions');
    const mirror = createNodeMirror({ dag, root });
    expect(await dag.listSessions()).toEqual([TRIP]);
    const result = await mirror.sync(TRIP);
    expect(result.head).toBe('retry-a7');
    const repo = mirror.repoPath(TRIP);

    const tips = branches(repo);
    expect(Object.keys(tips).sort()).toEqual(['fork-h4', 'main', 'retry-a7']);
    const main = commits(repo, 'main');
    expect(main.map((c) => c.message)).toEqual([
      TURN_1,
      [
        'turn 2: And tomorrow in Oslo?',
        '',
        'assistant: Cloudy tomorrow.',
        'tools: forecast',
        '',
        '[meta: turn took 3.0s, 1 tool, 70 tokens]',
        '',
        trailers('a4', 9, 2),
      ].join('\n'),
      [
        'turn 3: Thanks!',
        '',
        "assistant: You're welcome!",
        '',
        '[meta: turn took 1.0s]',
        '',
        trailers('a5', 11, 3),
      ].join('\n'),
    ]);
    expect(main.map((c) => c.time)).toEqual([T0 + 4, T0 + 63, T0 + 121]);

    // updateState on the end of turn 1, then invoke: a new question there is a fork.
    const fork = commits(repo, 'fork-h4');
    expect(fork.map((c) => c.message)).toEqual([
      TURN_1,
      [
        'turn 2: What about Trondheim?',
        '',
        'assistant: Snow in Trondheim.',
        '',
        '[meta: turn took 1.0s, 15 tokens]',
        '',
        trailers('a6', 13, 2),
      ].join('\n'),
    ]);
    expect(fork.map((c) => c.time)).toEqual([T0 + 4, T0 + 181]);
    // A run resumed from the checkpoint where turn 2's question waited: another reply to it.
    const retry = commits(repo, 'retry-a7');
    expect(retry.map((c) => c.message)).toEqual([
      TURN_1,
      [
        'turn 2: And tomorrow in Oslo?',
        '',
        'assistant: Rain tomorrow, take an umbrella.',
        '',
        '[meta: turn took 181.0s, 25 tokens]',
        '',
        trailers('a7', 14, 2),
      ].join('\n'),
    ]);
    expect(retry.map((c) => c.time)).toEqual([T0 + 4, T0 + 241]);
    // The three branches share turn 1's commit.
    expect(new Set([main[0]!.id, fork[0]!.id, retry[0]!.id]).size).toBe(1);
    expect([tips.main, tips['fork-h4'], tips['retry-a7']]).toEqual([main[2]!.id, fork[1]!.id, retry[1]!.id]);

    expect(files(repo, 'main')).toEqual([
      'messages/000001-u-h1.json',
      'messages/000002-a-a1.json',
      'messages/000003-t-t-c1.json',
      'messages/000004-t-t-c2.json',
      'messages/000005-a-a2.json',
      'messages/000006-u-h2.json',
      'messages/000007-a-a3.json',
      'messages/000008-t-t-c3.json',
      'messages/000009-a-a4.json',
      'messages/000010-u-h3.json',
      'messages/000011-a-a5.json',
      'meta.json',
    ]);
    expect(files(repo, 'fork-h4')).toEqual([
      ...FIRST_FIVE.map((f) => `messages/${f}`),
      'messages/000012-u-h4.json',
      'messages/000013-a-a6.json',
      'meta.json',
    ]);
    expect(files(repo, 'retry-a7')).toEqual([
      ...FIRST_FIVE.map((f) => `messages/${f}`),
      'messages/000006-u-h2.json',
      'messages/000014-a-a7.json',
      'meta.json',
    ]);

    // The message files: content blocks kept as JSON, tool calls and usage in the metadata, a
    // tool result riding on the call that names it.
    expect(git(repo, 'show', 'main:messages/000007-a-a3.json')).toBe(
      `${JSON.stringify(
        {
          caller: null,
          content: [{ text: 'Let me check the forecast.', type: 'text' }],
          created_at: T0 + 61,
          id: 'a3',
          metadata: {
            tokens: 50,
            tool_calls: [{ args: { city: 'Oslo' }, id: 'c3', name: 'forecast' }],
            type: 'ai',
            usage: { input_tokens: 40, output_tokens: 10, total_tokens: 50 },
          },
          predecessor: 'h2',
          role: 'assistant',
          seq: 7,
          session_id: TRIP,
        },
        null,
        2,
      )}\n`,
    );
    expect(JSON.parse(git(repo, 'show', 'main:messages/000008-t-t-c3.json'))).toEqual({
      caller: 'a3',
      content: 'Cloudy tomorrow in Oslo',
      created_at: T0 + 62,
      id: 't-c3',
      metadata: { tool: 'forecast', tool_call_id: 'c3', type: 'tool' },
      predecessor: 'a3',
      role: 'tool',
      seq: 8,
      session_id: TRIP,
    });

    // HEAD is the branch of the message LangGraph continues from (the newest checkpoint's last).
    expect(git(repo, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/retry-a7');
    expect(readFileSync(join(repo, 'messages', '000014-a-a7.json'), 'utf8')).toBe(
      git(repo, 'show', 'retry-a7:messages/000014-a-a7.json'),
    );
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(fsck(repo)).toBe('');
    expect((await mirror.verify(TRIP)).ok).toBe(true);
    expect((await mirror.sync(TRIP)).noop).toBe(true);

    // Read through the saver API only: not a byte of the checkpointer's tables changed.
    saver.db.close();
    expect(sqliteRows(file)).toEqual(before);
  });
});
