import { afterAll, describe, expect, it } from 'vitest';
import { parseTranscript } from '../src/index.js';
import { cleanupRoots, files, fsck, git, mirrorSessions, refs, turns } from './git-helpers.js';
import { filesByCommit, importOnce, subjects, writeTranscript } from './import-helpers.js';

afterAll(cleanupRoots);

// A made-up Codex CLI rollout, shaped as public descriptions of the format give it.
let clock = Date.UTC(2026, 1, 3, 4, 5, 6);
const rec = (type: string, payload: object) => ({ timestamp: new Date((clock += 1000)).toISOString(), type, payload });
const item = (payload: object) => rec('response_item', payload);
const say = (role: string, text: string) =>
  item({ type: 'message', role, content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text }] });

function rollout(): object[] {
  clock = Date.UTC(2026, 1, 3, 4, 5, 6);
  return [
    rec('session_meta', {
      id: '0199aaaa-0000-7000-8000-000000000001',
      cwd: '/home/dev/app',
      cli_version: '0.1.0',
      originator: 'codex_cli',
    }),
    say('user', '<environment_context>\n  <cwd>/home/dev/app</cwd>\n</environment_context>'),
    rec('turn_context', { model: 'test-model', cwd: '/home/dev/app' }),
    rec('event_msg', { type: 'user_message', message: 'count the 🐙 files' }),
    say('user', 'count the 🐙 files'),
    item({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'list then count' }] }),
    item({ type: 'function_call', name: 'shell', arguments: '{"command":["ls"]}', call_id: 'call_1' }),
    item({ type: 'function_call', name: 'shell', arguments: '{"command":["wc"]}', call_id: 'call_2' }),
    item({ type: 'function_call_output', call_id: 'call_2', output: '3' }),
    item({ type: 'function_call_output', call_id: 'call_1', output: 'a b c' }),
    say('assistant', 'Three 🐙 files.'),
    rec('event_msg', { type: 'token_count', info: null }),
    rec('event_msg', { type: 'task_complete', turn_id: 't1' }),
    say('user', 'and now?'),
    say('assistant', 'Still three.'),
  ];
}
const bytes = (records: object[]) => new TextEncoder().encode(records.map((r) => `${JSON.stringify(r)}\n`).join(''));

describe('Codex CLI rollouts', () => {
  it('one node per response, tool outputs riding on it, the turn committed once task_complete is logged', async () => {
    const records = rollout();
    const [p] = parseTranscript(bytes(records), 'codex', 'rollout-1').sessions;
    expect(p!.nodes.map((n) => [n.id, n.role, n.caller])).toEqual([
      ['l2', 'system', null],
      ['l5', 'user', null],
      ['l6', 'assistant', null],
      ['l9', 'tool', 'l6'],
      ['l10', 'tool', 'l6'],
      ['l11', 'assistant', null],
      ['l14', 'user', null],
      ['l15', 'assistant', null],
    ]);
    expect(p!.session.metadata).toEqual({ source: 'codex', cwd: '/home/dev/app' });
    const waiting = await mirrorSessions([p!]);
    const r = waiting.repo('rollout-1');
    expect(Object.keys(refs(r))).toEqual(['main']);
    expect(turns(r, 'main')).toBe(1);
    expect(files(r, 'main')).toEqual([
      'messages/000001-s-l2.json',
      'messages/000002-u-l5.json',
      'messages/000003-a-l6.json',
      'messages/000004-t-l9.json',
      'messages/000005-t-l10.json',
      'messages/000006-a-l11.json',
      'meta.json',
    ]);
    expect(git(r, 'log', '-1', '--format=%B', 'main')).toMatch(
      /^turn 1: count the 🐙 files\n\nassistant: Three 🐙 files.\ntools: shell × 2\n/,
    );

    // The second turn closes: one more commit on top of the first, which is unchanged.
    const first = refs(r).main!;
    const [done] = parseTranscript(
      bytes([...records, rec('event_msg', { type: 'task_complete', turn_id: 't2' })]),
      'codex',
      'rollout-1',
    ).sessions;
    const closed = await mirrorSessions([done!]);
    const c = closed.repo('rollout-1');
    expect(turns(c, 'main')).toBe(2);
    expect(git(c, 'rev-parse', 'main~1').trim()).toBe(first);
    expect(fsck(c)).toBe('');
  });

  it('a rollout whose last turn has no task_complete is finished once quiet: that turn is committed', async () => {
    // The rollout's records are dated 2026-02: older than the default quiet time.
    const name = 'rollout-2026-02-03T04-05-06-0199aaaa-0000-7000-8000-000000000001';
    const path = writeTranscript(`${name}.jsonl`, bytes(rollout()));
    const open = await importOnce(path, 'codex', { quietMs: Number.POSITIVE_INFINITY });
    expect(open.report.entries.map((e) => [e.result.commitsWritten, e.open])).toEqual([[1, true]]);
    const a = await importOnce(path, 'codex');
    const b = await importOnce(path, 'codex');
    expect(a.report.entries.map((e) => [e.result.commitsWritten, e.open])).toEqual([[2, false]]);
    const r = a.repo(name);
    expect(Object.keys(refs(r))).toEqual(['main']);
    expect(subjects(r, 'main')).toEqual(['turn 1: count the 🐙 files', 'turn 2: and now?']);
    expect(filesByCommit(r, 'main')[1]!.slice(-3)).toEqual([
      'messages/000007-u-l14.json',
      'messages/000008-a-l15.json',
      'meta.json',
    ]);
    expect(git(r, 'rev-parse', 'main~1').trim()).toBe(refs(open.repo(name)).main);
    expect(refs(b.repo(name))).toEqual(refs(r));
    expect(fsck(r)).toBe('');
  });
});
