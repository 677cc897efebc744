import { afterAll, describe, expect, it } from 'vitest';
import { parseTranscript } from '../src/index.js';
import { cleanupRoots, files, fsck, git, mirrorSessions, refs } from './git-helpers.js';
import { importOnce, messageFile, reflog, writeTranscript } from './import-helpers.js';

afterAll(cleanupRoots);

// A Gemini CLI session file made from the format's facts (shared/facts/agent-stores.md §4).
const at = (s: number) => new Date(Date.UTC(2026, 4, 23, 1, 0, s)).toISOString();
const meta = {
  sessionId: '6f1c2d3e-0000-4000-8000-000000000001',
  projectHash: 'abc123',
  startTime: at(0),
  lastUpdated: at(50),
  kind: 'main',
};
const user = (id: string, t: number, text: string) => ({ id, timestamp: at(t), type: 'user', content: text });
const gemini = (id: string, t: number, text: string, extra: object = {}) => ({
  id,
  timestamp: at(t),
  type: 'gemini',
  content: text,
  model: 'gemini-2.5-pro',
  thoughts: [{ subject: 'Plan', description: 'look first', timestamp: at(t) }],
  tokens: { input: 100, output: 10, cached: 0, thoughts: 5, tool: 0, total: 115 },
  ...extra,
});
const call = (id: string, name: string, status = 'success') => ({
  id,
  name,
  args: { path: 'a.ts' },
  result: [{ functionResponse: { id, name, response: { output: 'ok' } } }],
  status,
  timestamp: at(3),
});

function session(): object[] {
  return [
    meta,
    user('u1', 1, 'Read a.ts'),
    gemini('g1', 3, 'a.ts exports one constant.', { toolCalls: [call('c1', 'read_file'), call('c2', 'glob')] }),
    { $set: { summary: 'Reading a.ts', lastUpdated: at(4) } },
    user('u2', 10, 'Now delete it'),
    gemini('g2', 11, 'Deleted.', { toolCalls: [call('c3', 'shell')] }),
    { $rewindTo: 'u2' },
    user('u3', 20, 'Rename it instead'),
    gemini('g3', 21, 'Renming.'),
    // The same id again: the reply replaced in place.
    gemini('g3', 22, 'Renamed to b.ts.', { toolCalls: [call('c4', 'shell')] }),
    { id: 'e1', timestamp: at(23), type: 'error', content: 'quota exceeded' },
    user('u4', 30, 'Thanks'), // nothing answers it: the session ended here
  ];
}
const jsonl = (records: object[]) => new TextEncoder().encode(records.map((r) => `${JSON.stringify(r)}\n`).join(''));

describe('Gemini CLI sessions', () => {
  it('one path, a rewind kept as a branch, a replaced record committed again, tools and tokens in the messages', async () => {
    const [p] = parseTranscript(jsonl(session()), 'gemini', 'session-2026-05-23T01-00-6f1c2d3e', {
      finished: true,
    }).sessions;
    expect(p!.nodes.map((n) => [n.id, n.role, n.predecessor])).toEqual([
      ['u1', 'user', null],
      ['g1', 'assistant', 'u1'],
      ['u2', 'user', 'g1'],
      ['g2', 'assistant', 'u2'],
      ['u3', 'user', 'g1'],
      ['g3', 'assistant', 'u3'],
      ['e1', 'system', 'g3'],
      ['u4', 'user', 'e1'],
    ]);
    expect(p!.session).toMatchObject({ title: 'Reading a.ts', head: 'u4', agent_id: 'gemini-cli' });
    const { repo } = await mirrorSessions([p!]);
    const r = repo('session-2026-05-23T01-00-6f1c2d3e');
    fsck(r);
    // The rewound path keeps the lowest seq at the fork, so it stays main; the conversation goes on in fork-u3.
    expect(Object.keys(refs(r)).sort()).toEqual(['fork-u3', 'main']);
    expect(git(r, 'symbolic-ref', '--short', 'HEAD').trim()).toBe('fork-u3');
    expect(files(r, 'main')).toEqual([
      messageFile(1, 'user', 'u1'),
      messageFile(2, 'assistant', 'g1'),
      messageFile(3, 'user', 'u2'),
      messageFile(4, 'assistant', 'g2'),
      'meta.json',
    ]);
    expect(files(r, 'fork-u3')).toEqual([
      messageFile(1, 'user', 'u1'),
      messageFile(2, 'assistant', 'g1'),
      messageFile(5, 'user', 'u3'),
      messageFile(6, 'assistant', 'g3'),
      messageFile(7, 'system', 'e1'),
      messageFile(8, 'user', 'u4'),
      'meta.json',
    ]);
    const bodies = git(r, 'log', '--reverse', '--format=%B%x00', 'fork-u3').split('\0\n');
    expect(bodies[0]).toContain(
      'assistant: a.ts exports one constant.\ntools: read_file, glob\n\n[meta: turn took 2.0s, 2 tools, 115 tokens]',
    );
    expect(bodies[1]).toContain('turn 2: Rename it instead\n\nassistant: Renamed to b.ts.\ntools: shell\n');
    expect(bodies[2]).toContain('turn 3: Thanks');
    expect(JSON.parse(git(r, 'show', `fork-u3:${messageFile(6, 'assistant', 'g3')}`)).metadata.thoughts).toHaveLength(
      1,
    );
  });

  it('imported from a file: the last prompt waits until the file goes quiet; a replaced reply commits its turn again', async () => {
    const records = session().slice(0, 9); // up to g3's first version
    const path = writeTranscript('session-2026-05-23T01-00-6f1c2d3e.jsonl', jsonl(records));
    const first = await importOnce(path, 'gemini', { quietMs: Number.POSITIVE_INFINITY });
    const r = first.repo('session-2026-05-23T01-00-6f1c2d3e');
    expect(git(r, 'rev-list', '--count', 'fork-u3').trim()).toBe('2');
    const before = git(r, 'rev-parse', 'fork-u3').trim();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path, jsonl(session()));
    const again = await first.run({ quietMs: 0 });
    expect(again.failures).toEqual([]);
    expect(git(r, 'rev-list', '--count', 'fork-u3').trim()).toBe('3');
    expect(reflog(r, 'fork-u3')).toContain(before);
    const [fresh] = parseTranscript(jsonl(session()), 'gemini', 'session-2026-05-23T01-00-6f1c2d3e', {
      finished: true,
    }).sessions;
    const backfill = await mirrorSessions([fresh!]);
    expect(refs(r)).toEqual(refs(backfill.repo('session-2026-05-23T01-00-6f1c2d3e')));
  });

  it('a tool response written as a user record (v0.44 on) rides on its reply, its call counted once', async () => {
    const records = [
      meta,
      user('u1', 1, 'Read a.ts'),
      gemini('g1', 2, '', { toolCalls: [call('c1', 'read_file')] }),
      {
        id: 'r1',
        timestamp: at(3),
        type: 'user',
        content: [{ functionResponse: { id: 'c1', name: 'read_file', response: { output: 'x' } } }],
      },
      gemini('g2', 4, 'It holds x.'),
    ];
    const [p] = parseTranscript(jsonl(records), 'gemini', 'tools', { finished: true }).sessions;
    expect(p!.nodes.map((n) => [n.id, n.role, n.caller])).toEqual([
      ['u1', 'user', null],
      ['g1', 'assistant', null],
      ['r1', 'tool', 'g1'],
      ['g2', 'assistant', null],
    ]);
    const { repo } = await mirrorSessions([p!]);
    const body = git(repo('tools'), 'log', '-1', '--format=%B', 'main');
    expect(body).toContain('assistant: It holds x.\ntools: read_file\n\n[meta: turn took 3.0s, 1 tool, 230 tokens]');
  });

  it('the older .json file: one object with messages[]', async () => {
    const doc = { ...meta, messages: session().slice(1, 3) };
    const [p] = parseTranscript(new TextEncoder().encode(JSON.stringify(doc)), 'gemini', 'old', {
      finished: true,
    }).sessions;
    expect(p!.nodes.map((n) => [n.id, n.role])).toEqual([
      ['u1', 'user'],
      ['g1', 'assistant'],
    ]);
    expect(p!.session.metadata).toMatchObject({ project_hash: 'abc123', kind: 'main' });
  });
});
