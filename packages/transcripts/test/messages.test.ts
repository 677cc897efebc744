import { afterAll, describe, expect, it } from 'vitest';
import { parseTranscript } from '../src/index.js';
import { utimesSync, writeFileSync } from 'node:fs';
import { cleanupRoots, files, fsck, git, mirrorSessions, refs, turns } from './git-helpers.js';
import { filesByCommit, importer, importOnce, subjects, writeTranscript } from './import-helpers.js';

afterAll(cleanupRoots);

// A made-up Chat Completions exchange: two prompts, parallel tool calls in the first.
const log = [
  { role: 'system', content: 'You are a test agent.' },
  { role: 'user', content: 'What is the weather in Oslo and Bergen? 🌧' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
      { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Bergen"}' } },
    ],
  },
  { role: 'tool', tool_call_id: 'call_b', content: 'rain' },
  { role: 'tool', tool_call_id: 'call_a', content: 'snow' },
  { role: 'assistant', content: 'Oslo: snow. Bergen: rain.', usage: { total_tokens: 321 } },
  { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
  { role: 'assistant', content: 'You are welcome.' },
];
const enc = (s: string) => new TextEncoder().encode(s);

describe('OpenAI-style message logs', () => {
  it('a JSON array, an object with messages and JSONL give the same DAG and the same commits', async () => {
    const array = parseTranscript(enc(JSON.stringify(log, null, 2)), 'messages', 'chat-1').sessions;
    expect(parseTranscript(enc(JSON.stringify({ model: 'x', messages: log })), 'messages', 'chat-1').sessions).toEqual(
      array,
    );
    expect(
      parseTranscript(enc(log.map((m) => `${JSON.stringify(m)}\n`).join('')), 'messages', 'chat-1').sessions,
    ).toEqual(array);
    const [p] = array;
    expect(p!.nodes.map((n) => [n.id, n.role, n.caller])).toEqual([
      ['m1', 'system', null],
      ['m2', 'user', null],
      ['m3', 'assistant', null],
      ['m4', 'tool', 'm3'],
      ['m5', 'tool', 'm3'],
      ['m6', 'assistant', null],
      ['m7', 'user', null],
      ['m8', 'assistant', null],
    ]);
    const { repo } = await mirrorSessions(array);
    const r = repo('chat-1');
    expect(Object.keys(refs(r))).toEqual(['main']);
    expect(turns(r, 'main')).toBe(2);
    expect(files(r, 'main~1')).toEqual([
      'messages/000001-s-m1.json',
      'messages/000002-u-m2.json',
      'messages/000003-a-m3.json',
      'messages/000004-t-m4.json',
      'messages/000005-t-m5.json',
      'messages/000006-a-m6.json',
      'meta.json',
    ]);
    expect(git(r, 'log', '-1', '--format=%B', 'main~1')).toBe(
      [
        'turn 1: What is the weather in Oslo and Bergen? 🌧',
        '',
        'assistant: Oslo: snow. Bergen: rain.',
        'tools: get_weather × 2',
        '',
        '[meta: turn took 0.0s, 2 tools, 321 tokens]',
        '',
        'Session: chat-1',
        'Turn: 1',
        'Node: m6',
        'Seq: 6',
        '',
        '',
      ].join('\n'),
    );
    // No times in the log: commits are dated at the epoch, the same on every machine.
    expect(git(r, 'log', '-1', '--format=%at', 'main')).toBe('0\n');
    expect(fsck(r)).toBe('');
  });

  it('a log waiting for a reply or for tool results leaves its last turn uncommitted', async () => {
    const waiting = parseTranscript(enc(JSON.stringify(log.slice(0, 7))), 'messages', 'chat-2').sessions;
    const calls = parseTranscript(enc(JSON.stringify(log.slice(0, 4))), 'messages', 'chat-3').sessions;
    expect(waiting[0]!.nodes.at(-1)!.metadata).toMatchObject({ pending: true });
    const a = await mirrorSessions(waiting);
    expect(turns(a.repo('chat-2'), 'main')).toBe(1);
    const b = await mirrorSessions(calls);
    expect(refs(b.repo('chat-3'))).toEqual({});
  });

  it('bad logs are TRANSCRIPT_INVALID; a document still being written says so', () => {
    const codeOf = (text: string) => {
      try {
        parseTranscript(enc(text), 'messages', 'chat-4');
      } catch (err) {
        return [(err as { code: string }).code, (err as { data: { incomplete?: boolean } }).data.incomplete];
      }
      return null;
    };
    expect(codeOf('[{"role":"user","content":"hi"},')).toEqual(['TRANSCRIPT_INVALID', true]);
    expect(codeOf('[{"role":"nobody","content":"hi"}]')).toEqual(['TRANSCRIPT_INVALID', undefined]);
    expect(codeOf('{"not":"messages"}')).toEqual(['TRANSCRIPT_INVALID', undefined]);
  });

  it('a log without times waiting for a reply is finished when the file has been quiet: its time is the mtime', async () => {
    const path = writeTranscript('chat-5.json', JSON.stringify(log.slice(0, 7)));
    // Written just now: still being written, the last prompt waits.
    const fresh = await importOnce(path, 'messages');
    expect(fresh.report.entries.map((e) => [e.result.commitsWritten, e.open])).toEqual([[1, true]]);
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(path, hourAgo, hourAgo);
    const a = importer(path, 'messages');
    await a.run();
    const b = await importOnce(path, 'messages');
    const r = a.repo('chat-5');
    expect(subjects(r, 'main')).toEqual(['turn 1: What is the weather in Oslo and Bergen? 🌧', 'turn 2: Thanks']);
    expect(filesByCommit(r, 'main')[1]!.slice(-2)).toEqual(['messages/000007-u-m7.json', 'meta.json']);
    expect(refs(b.repo('chat-5'))).toEqual(refs(r));
    const interim = refs(r).main!;

    // The reply lands (another run of the import): turn 2 is committed again, with the reply.
    writeFileSync(path, JSON.stringify(log));
    await importer(path, 'messages', a.root).run();
    const whole = writeTranscript('chat-5.json', JSON.stringify(log));
    expect(refs(r)).toEqual(refs((await importOnce(whole, 'messages')).repo('chat-5')));
    expect(filesByCommit(r, 'main')[1]!.slice(-3)).toEqual([
      'messages/000007-u-m7.json',
      'messages/000008-a-m8.json',
      'meta.json',
    ]);
    expect(git(r, 'reflog', '--format=%H', 'main').trim().split('\n')).toEqual([refs(r).main, interim]);
    expect(fsck(r)).toBe('');
  });
});
