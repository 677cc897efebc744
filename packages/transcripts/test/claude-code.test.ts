import { afterAll, describe, expect, it } from 'vitest';
import { derive, nodeFacts } from '@entity-git/core';
import { parseTranscript, type ParsedSession } from '../src/index.js';
import { ClaudeTranscript } from './claude-fixture.js';
import { cleanupRoots, files, fsck, git, mirrorSessions, refs, turns } from './git-helpers.js';

afterAll(cleanupRoots);

const parse = (t: ClaudeTranscript): ParsedSession[] => parseTranscript(t.bytes(), 'claude-code', t.sessionId);
const only = (sessions: ParsedSession[]): ParsedSession => {
  expect(sessions).toHaveLength(1);
  return sessions[0]!;
};
const branchesOf = (p: ParsedSession) => derive(p.nodes.map((n) => nodeFacts(n)), p.session.head).branches.map((b) => [b.name, b.turns.length, b.complete]);

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
      expect(files(r, 'main')).toEqual([...p.nodes.map((n) => `messages/${String(n.seq).padStart(6, '0')}-${n.role[0]}-${n.id}.json`), 'meta.json']);
      const tools = ['Read', 'Grep', 'Grep', 'Glob', 'Bash'].slice(0, width);
      const counted = [...new Set(tools)].map((name) => (tools.filter((x) => x === name).length > 1 ? `${name} × ${tools.filter((x) => x === name).length}` : name));
      expect(git(r, 'log', '-1', '--format=%B', 'main~1')).toContain(`tools: ${counted.join(', ')}`);
      expect(git(r, 'log', '-1', '--format=%s', 'main')).toBe('turn 2: fix it\n');
      expect(fsck(r)).toBe('');
    });
  }
});
