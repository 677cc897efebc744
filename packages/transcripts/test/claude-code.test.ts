import { afterAll, describe, expect, it } from 'vitest';
import { derive, nodeFacts } from '@entity-git/core';
import { parseTranscript, type ParsedSession } from '../src/index.js';
import { ClaudeTranscript } from './claude-fixture.js';
import { cleanupRoots, files, fsck, git, mirrorSessions, refs, turns } from './git-helpers.js';

afterAll(cleanupRoots);

const parse = (t: ClaudeTranscript): ParsedSession[] => parseTranscript(t.bytes(), 'claude-code', t.sessionId).sessions;
const only = (sessions: ParsedSession[]): ParsedSession => {
  expect(sessions).toHaveLength(1);
  return sessions[0]!;
};
const branchesOf = (p: ParsedSession) =>
  derive(
    p.nodes.map((n) => nodeFacts(n)),
    p.session.head,
  ).branches.map((b) => [b.name, b.turns.length, b.complete]);

describe('Claude Code transcripts', () => {
  for (const width of [2, 3, 4, 5]) {
    it(`parallel calls of ${width} tools give one branch, one node per response`, async () => {
      const t = new ClaudeTranscript();
      t.bookkeeping('queue-operation');
      const u1 = t.user('find the bug', null);
      t.bookkeeping('file-history-snapshot');
      const first = t.parallel(u1, ['Read', 'Grep', 'Grep', 'Glob', 'Bash'].slice(0, width));
      const reply = t.response(first.last, [{ text: 'Found it.' }], { stop: 'end_turn' });
      const u2 = t.user('fix it', reply.last);
      const second = t.parallel(u2, ['Edit', 'Bash']);
      const done = t.response(second.last, [{ text: 'Fixed.' }]);
      t.system('turn_duration', done.last, { durationMs: 1234 });
      const p = only(parse(t));
      // Two prompts, four model responses, width + 2 tool results.
      expect(p.nodes.map((n) => n.role[0]).join('')).toBe(`ua${'t'.repeat(width)}auatta`);
      expect(branchesOf(p)).toEqual([['main', 2, 2]]);
      const responseNode = p.nodes[1]!;
      expect(responseNode.id).toBe(first.response[0]);
      expect((responseNode.metadata as { records: string[] }).records).toEqual(first.response);
      expect((responseNode.content as unknown[]).length).toBe(2 + width);
      expect(p.nodes.filter((n) => n.role === 'tool').every((n) => n.caller !== null)).toBe(true);

      const { repo } = await mirrorSessions([p]);
      const r = repo(t.sessionId);
      expect(Object.keys(refs(r))).toEqual(['main']);
      expect(turns(r, 'main')).toBe(2);
      expect(files(r, 'main')).toEqual([
        ...p.nodes.map((n) => `messages/${String(n.seq).padStart(6, '0')}-${n.role[0]}-${n.id}.json`),
        'meta.json',
      ]);
      const tools = ['Read', 'Grep', 'Grep', 'Glob', 'Bash'].slice(0, width);
      const counted = [...new Set(tools)].map((name) =>
        tools.filter((x) => x === name).length > 1 ? `${name} × ${tools.filter((x) => x === name).length}` : name,
      );
      expect(git(r, 'log', '-1', '--format=%B', 'main~1')).toContain(`tools: ${counted.join(', ')}`);
      expect(git(r, 'log', '-1', '--format=%s', 'main')).toBe('turn 2: fix it\n');
      expect(fsck(r)).toBe('');
    });
  }

  it('a regenerated reply is a retry branch; main is the conversation as it first went', async () => {
    const t = new ClaudeTranscript();
    const u1 = t.user('write a haiku', null);
    t.response(u1, [{ text: 'First haiku.' }], { stop: 'end_turn' });
    const again = t.response(u1, [{ thinking: 'try again' }, { text: 'Second haiku.' }], { stop: 'end_turn' });
    const u2 = t.user('shorter', again.last);
    const y = t.response(u2, [{ text: 'Short.' }]);
    t.system('stop_hook_summary', y.last);
    const p = only(parse(t));
    expect(p.nodes.map((n) => n.role[0]).join('')).toBe('uaaua');
    const { repo } = await mirrorSessions([p]);
    const r = repo(t.sessionId);
    expect(Object.keys(refs(r)).sort()).toEqual(['main', `retry-${again.records[0]}`]);
    expect(turns(r, 'main')).toBe(1);
    expect(turns(r, `retry-${again.records[0]}`)).toBe(2);
    expect(git(r, 'symbolic-ref', 'HEAD').trim()).toBe(`refs/heads/retry-${again.records[0]}`);
    expect(
      files(r, 'main')
        .filter((f) => f.startsWith('messages/'))
        .map((f) => f.slice(9, 17)),
    ).toEqual(['000001-u', '000002-a']);
    expect(
      files(r, `retry-${again.records[0]}`)
        .filter((f) => f.startsWith('messages/'))
        .map((f) => f.slice(9, 17)),
    ).toEqual(['000001-u', '000003-a', '000004-u', '000005-a']);
    expect(git(r, 'log', '-1', '--format=%B', 'main')).toContain('assistant: First haiku.');
    expect(fsck(r)).toBe('');
  });

  it('an edited prompt is a fork branch sharing the turns before it', async () => {
    const t = new ClaudeTranscript();
    const u1 = t.user('set up the project', null);
    const x = t.response(u1, [{ tool: 'Bash' }]);
    const res = t.result(x.tools[0]!, x.last, 'ok');
    const x2 = t.response(res, [{ text: 'Set up.' }], { stop: 'end_turn' });
    const u2 = t.user('add tests', x2.last);
    t.response(u2, [{ text: 'Tests added.' }], { stop: 'end_turn' });
    const u2b = t.user('add tests and docs', x2.last);
    t.response(u2b, [{ text: 'Both added.' }], { stop: 'end_turn' });
    const p = only(parse(t));
    const { repo } = await mirrorSessions([p]);
    const r = repo(t.sessionId);
    const names = Object.keys(refs(r)).sort();
    expect(names).toEqual([`fork-${u2b}`, 'main']);
    expect(turns(r, 'main')).toBe(2);
    expect(turns(r, `fork-${u2b}`)).toBe(2);
    expect(git(r, 'rev-parse', 'main~1')).toBe(git(r, 'rev-parse', `fork-${u2b}~1`));
    expect(git(r, 'log', '-1', '--format=%B', 'main~1')).toContain('tools: Bash');
    expect(git(r, 'log', '-1', '--format=%s', `fork-${u2b}`)).toBe('turn 2: add tests and docs\n');
    expect(fsck(r)).toBe('');
  });

  it('a compaction continues the same path', async () => {
    const t = new ClaudeTranscript();
    const u1 = t.user('long task', null);
    const x = t.response(u1, [{ text: 'Working.' }], { stop: 'end_turn' });
    const boundary = t.system('compact_boundary', null, {
      logicalParentUuid: x.last,
      compactMetadata: { trigger: 'auto', preTokens: 155000 },
    });
    const summary = t.user('This session is being continued from a previous conversation.', boundary, {
      isCompactSummary: true,
      isVisibleInTranscriptOnly: true,
    });
    const y = t.response(summary, [{ text: 'Continuing.' }], { stop: 'end_turn' });
    const u3 = t.user('and now?', y.last);
    t.response(u3, [{ text: 'Done.' }], { stop: 'end_turn' });
    t.bookkeeping('summary');
    const p = only(parse(t));
    expect(branchesOf(p)).toEqual([['main', 3, 3]]);
    const { repo } = await mirrorSessions([p]);
    const r = repo(t.sessionId);
    expect(Object.keys(refs(r))).toEqual(['main']);
    expect(turns(r, 'main')).toBe(3);
    expect(
      files(r, 'main~2')
        .filter((f) => f.startsWith('messages/'))
        .map((f) => f.slice(9, 17)),
    ).toEqual(['000001-u', '000002-a', '000003-s']);
    expect(git(r, 'log', '-1', '--format=%s', 'main~1')).toBe(
      'turn 2: This session is being continued from a previous conversation\n',
    );
    expect(fsck(r)).toBe('');
  });

  it('sidechain records are a session of their own', async () => {
    const t = new ClaudeTranscript();
    const u1 = t.user('research this', null);
    const x = t.response(u1, [{ tool: 'Task', input: { prompt: 'look around' } }]);
    const su = t.user('look around', null, { isSidechain: true });
    const sa = t.response(su, [{ tool: 'Read' }], { sidechain: true });
    const sr = t.result(sa.tools[0]!, sa.last, 'file text', { sidechain: true });
    t.response(sr, [{ text: 'Found three files.' }], { sidechain: true });
    const back = t.result(x.tools[0]!, x.last, 'Found three files.');
    t.response(back, [{ text: 'The agent found three files.' }], { stop: 'end_turn' });
    const sessions = parse(t);
    expect(sessions.map((s) => s.session.id)).toEqual([t.sessionId, `${t.sessionId}.agent-${su}`]);
    expect(sessions.map((s) => s.nodes.map((n) => n.role[0]).join(''))).toEqual(['uata', 'uata']);
    expect((sessions[1]!.session.metadata as { parent_session: string }).parent_session).toBe(t.sessionId);
    const { repo } = await mirrorSessions(sessions);
    for (const s of sessions) {
      const r = repo(s.session.id);
      expect(Object.keys(refs(r))).toEqual(['main']);
      expect(turns(r, 'main')).toBe(1);
      expect(fsck(r)).toBe('');
    }
    expect(git(repo(sessions[1]!.session.id), 'log', '-1', '--format=%B', 'main')).toContain('tools: Read');
  });

  it('a message id met again away from its response is another response', () => {
    const t = new ClaudeTranscript();
    const u1 = t.user('first', null);
    const a = t.response(u1, [{ text: 'one' }], { stop: 'end_turn' });
    const u2 = t.user('second', a.last);
    const b = t.response(u2, [{ text: 'two' }], { stop: 'end_turn' });
    // Both responses carry one id, as synthetic error messages may.
    for (const r of t.records) {
      const m = (r as { message?: { id?: string } }).message;
      if (m?.id) m.id = 'msg_synthetic';
    }
    const p = only(parse(t));
    expect(p.nodes.map((n) => [n.id, n.role])).toEqual([
      [u1, 'user'],
      [a.records[0], 'assistant'],
      [u2, 'user'],
      [b.records[0], 'assistant'],
    ]);
    expect(branchesOf(p)).toEqual([['main', 2, 2]]);
  });

  it('a file of sidechain records alone (agent-*.jsonl) is itself the session', () => {
    const t = new ClaudeTranscript('agent-3f2a');
    const su = t.user('look around', null, { isSidechain: true, agentId: '3f2a' });
    t.response(su, [{ text: 'Looked.' }], { sidechain: true, stop: 'end_turn' });
    const sessions = parse(t);
    expect(sessions.map((s) => [s.session.id, s.nodes.map((n) => n.role[0]).join(''), s.session.metadata])).toEqual([
      ['agent-3f2a', 'ua', { source: 'claude-code', cwd: '/home/dev/project' }],
    ]);
    expect(branchesOf(sessions[0]!)).toEqual([['main', 1, 1]]);
  });

  it('a torn last line is left for later; a complete line that is not JSON is skipped, or refused when strict', async () => {
    const t = new ClaudeTranscript();
    const u1 = t.user('hello 😀', null);
    const x = t.response(u1, [{ text: 'hi 𝄞' }], { stop: 'end_turn' });
    const whole = t.bytes();
    t.user('second prompt with 😀 in it', x.last);
    const grown = t.bytes();
    // Cut inside the surrogate pair's UTF-8 bytes of the last line: still only the first lines.
    const cut = grown.subarray(0, grown.length - 8);
    expect(parseTranscript(cut, 'claude-code', t.sessionId)).toEqual(
      parseTranscript(whole, 'claude-code', t.sessionId),
    );
    const a = await mirrorSessions(parseTranscript(cut, 'claude-code', t.sessionId).sessions);
    const b = await mirrorSessions(parseTranscript(whole, 'claude-code', t.sessionId).sessions);
    expect(refs(a.repo(t.sessionId))).toEqual(refs(b.repo(t.sessionId)));
    expect(turns(a.repo(t.sessionId), 'main')).toBe(1);

    const bad = new TextEncoder().encode(`${t.text()}{"type":"user",\n`);
    expect(parseTranscript(bad, 'claude-code', t.sessionId).warnings).toEqual([
      {
        line: t.records.length + 1,
        column: 1,
        reason: 'cut-off',
        warning: `line ${t.records.length + 1} skipped: a record cut off`,
      },
    ]);
    let error: unknown;
    try {
      parseTranscript(bad, 'claude-code', t.sessionId, { strict: true });
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ code: 'TRANSCRIPT_INVALID', data: { line: t.records.length + 1 } });
  });

  it('non-BMP text reaches files and commit messages whole', async () => {
    const t = new ClaudeTranscript();
    const u1 = t.user('𝒻𝒾𝓍 the 😀 parser — 修正', null);
    t.response(u1, [{ text: 'Done 🎉 𝄞' }], { stop: 'end_turn' });
    const p = only(parse(t));
    const { repo } = await mirrorSessions([p]);
    const r = repo(t.sessionId);
    expect(git(r, 'log', '-1', '--format=%B', 'main')).toMatch(
      /^turn 1: 𝒻𝒾𝓍 the 😀 parser — 修正\n\nassistant: Done 🎉 𝄞\n/,
    );
    expect(git(r, 'show', `main:messages/000001-u-${u1}.json`)).toContain('"content": "𝒻𝒾𝓍 the 😀 parser — 修正"');
    expect(fsck(r)).toBe('');
  });

  it('a 20 MB tool output is one message file', async () => {
    const t = new ClaudeTranscript();
    const u1 = t.user('dump the log', null);
    const x = t.response(u1, [{ tool: 'Bash', input: { command: 'cat big.log' } }]);
    const big = 'log line 0123456789 abcdefghij\n'.repeat(Math.ceil((20 << 20) / 31));
    const res = t.result(x.tools[0]!, x.last, big);
    t.response(res, [{ text: 'That is a big log.' }], { stop: 'end_turn' });
    const p = only(parse(t));
    const { repo } = await mirrorSessions([p]);
    const r = repo(t.sessionId);
    expect(turns(r, 'main')).toBe(1);
    const size = Number(git(r, 'cat-file', '-s', `main:messages/000003-t-${res}.json`).trim());
    expect(size).toBeGreaterThan(big.length);
    expect(size).toBeLessThan(big.length + (2 << 20));
    expect(git(r, 'status', '--porcelain')).toBe('');
    expect(fsck(r)).toBe('');
  });
});
