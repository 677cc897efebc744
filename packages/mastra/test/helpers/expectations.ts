import type { MastraStorage } from '@mastra/core/storage';
import { expect } from 'vitest';
import { commitCount, files, git, headBranch, judged, message, refs } from './git.js';

type Messages = Awaited<ReturnType<MastraStorage['getMessages']>>;

/** The thread's messages as Mastra's own API returns them (format 2), with their times in seconds. */
export async function apiMessages(storage: MastraStorage, threadId: string) {
  const messages = (await storage.getMessages({ threadId, format: 'v2' })) as Messages & { createdAt: Date }[];
  return messages.map((m) => ({ id: m.id, role: m.role, at: m.createdAt.getTime() / 1000 }));
}

const took = (a: number, b: number) => (b - a).toFixed(1);

/**
 * What the mirror of {@link haveConversations}' threads must be, as native git shows it: one
 * branch, HEAD on it, the files of each turn, the commit messages (tools, tokens, trailers), the
 * commit times, `git fsck --strict` silent and a clean working tree.
 */
export async function expectConversationRepos(storage: MastraStorage, repo: (id: string) => string): Promise<void> {
  const [u1, a1, u2, a2] = await apiMessages(storage, 'trip');
  const trip = repo('trip');
  expect(Object.keys(refs(trip))).toEqual(['main']);
  expect(headBranch(trip)).toBe('main');
  expect(commitCount(trip, 'main')).toBe(2);
  expect(files(trip, 'main~1')).toEqual([
    `messages/000001-u-${u1!.id}.json`,
    `messages/000002-a-${a1!.id}.json`,
    `messages/000003-t-${a1!.id}.call-paris.json`,
    `messages/000004-t-${a1!.id}.call-rome.json`,
    'meta.json',
  ]);
  expect(files(trip, 'main').slice(4, 6)).toEqual([
    `messages/000005-u-${u2!.id}.json`,
    `messages/000006-a-${a2!.id}.json`,
  ]);
  expect(message(trip, 'main~1')).toBe(
    [
      'turn 1: What is the weather in Paris and Rome?',
      '',
      'assistant: Sunny in Paris, rain in Rome.',
      'tools: weather × 2',
      '',
      `[meta: turn took ${took(u1!.at, a1!.at)}s, 2 tools, 151 tokens]`,
      '',
      'Session: trip',
      'Turn: 1',
      `Node: ${a1!.id}.call-rome`,
      'Seq: 4',
      '',
      '',
    ].join('\n'),
  );
  expect(message(trip, 'main')).toBe(
    [
      'turn 2: And tomorrow?',
      '',
      'assistant: Tomorrow it is sunny in both.',
      '',
      `[meta: turn took ${took(u2!.at, a2!.at)}s]`,
      '',
      'Session: trip',
      'Turn: 2',
      `Node: ${a2!.id}`,
      'Seq: 6',
      '',
      '',
    ].join('\n'),
  );
  expect(git(trip, 'log', '--format=%at', 'main')).toBe(`${Math.floor(a2!.at)}\n${Math.floor(a1!.at)}\n`);
  // The tool result's file, byte for byte.
  expect(git(trip, 'show', `main:messages/000003-t-${a1!.id}.call-paris.json`)).toBe(
    `${JSON.stringify(
      {
        caller: a1!.id,
        content: { city: 'Paris', sky: 'sun' },
        created_at: a1!.at,
        id: `${a1!.id}.call-paris`,
        metadata: { tool: 'weather', toolCallId: 'call-paris' },
        predecessor: a1!.id,
        role: 'tool',
        seq: 3,
        session_id: 'trip',
      },
      null,
      2,
    )}\n`,
  );
  expect(judged(trip)).toEqual({ fsck: '', status: '' });

  const [n1, b1, n2, b2] = await apiMessages(storage, 'notes');
  const notes = repo('notes');
  expect(Object.keys(refs(notes))).toEqual(['main']);
  expect(files(notes, 'main')).toEqual([
    `messages/000001-u-${n1!.id}.json`,
    `messages/000002-a-${b1!.id}.json`,
    `messages/000003-t-${b1!.id}.call-1.json`,
    `messages/000004-u-${n2!.id}.json`,
    `messages/000005-a-${b2!.id}.json`,
    `messages/000006-t-${b2!.id}.call-1.json`,
    'meta.json',
  ]);
  expect(message(notes, 'main').split('\n').slice(0, 5)).toEqual([
    'turn 2: Read the trip note',
    '',
    'assistant: The trip is on Friday.',
    'tools: notes',
    '',
  ]);
  expect(judged(notes)).toEqual({ fsck: '', status: '' });
}
