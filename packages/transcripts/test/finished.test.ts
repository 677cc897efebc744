// Transcripts nothing closes: older Claude Code versions wrote "stop_reason": null on every
// assistant record and no turn-end record. Their records are dated 2026-01 by the fixture, so
// with the default quiet time (5 minutes) they are finished; `quietMs: Infinity` is how they
// were read before (only the transcript's own marks close a turn).
import { appendFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { ClaudeTranscript } from './claude-fixture.js';
import { cleanupRoots, fsck, git, refs } from './git-helpers.js';
import {
  filesByCommit,
  importer,
  importOnce,
  messageFile,
  reflog,
  subjects,
  writeTranscript,
} from './import-helpers.js';

afterAll(cleanupRoots);

const OLD = '1.0.30';
const NEVER = Number.POSITIVE_INFINITY;
const MIN = 60_000;

/** One prompt, a tool call, its result and the reply, as an older version logged them. */
function onePrompt(id: string) {
  const t = new ClaudeTranscript(id, '/home/dev/app', OLD);
  const u1 = t.user('list the files', null);
  const call = t.response(u1, [{ text: 'Listing.' }, { tool: 'Bash', input: { command: 'ls' } }]);
  const result = t.result(call.tools[0]!, call.last, 'a.txt b.txt');
  const reply = t.response(result, [{ text: 'Two files: a.txt and b.txt.' }]);
  return { t, u1, call, result, reply };
}

describe('a transcript nothing closed is finished after the quiet time', () => {
  it('older version, one prompt: the turn is committed (it was never, before)', async () => {
    const { t, u1, call, result, reply } = onePrompt('01d00000-0000-4000-8000-000000000001');
    const path = writeTranscript(`${t.sessionId}.jsonl`, t.text());

    const before = await importOnce(path, 'claude-code', { quietMs: NEVER });
    expect(before.report.entries.map((e) => [e.result.commitsWritten, e.open])).toEqual([[0, true]]);
    expect(refs(before.repo(t.sessionId))).toEqual({});

    const a = await importOnce(path, 'claude-code');
    const b = await importOnce(path, 'claude-code');
    expect(a.report).toMatchObject({ failures: [], warnings: [] });
    expect(a.report.entries.map((e) => [e.nodes, e.result.commitsWritten, e.open])).toEqual([[4, 1, false]]);
    const repo = a.repo(t.sessionId);
    expect(Object.keys(refs(repo))).toEqual(['main']);
    expect(subjects(repo, 'main')).toEqual(['turn 1: list the files']);
    expect(filesByCommit(repo, 'main')).toEqual([
      [
        messageFile(1, 'user', u1),
        messageFile(2, 'assistant', call.records[0]!),
        messageFile(3, 'tool', result),
        messageFile(4, 'assistant', reply.records[0]!),
        'meta.json',
      ],
    ]);
    expect(git(repo, 'log', '-1', '--format=%B', 'main')).toMatch(
      /^turn 1: list the files\n\nassistant: Two files: a\.txt and b\.txt\.\ntools: Bash\n/,
    );
    expect(refs(b.repo(t.sessionId))).toEqual(refs(repo));
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(fsck(repo)).toBe('');
  });

  it('older version, several turns: every turn committed, the last one too', async () => {
    const t = new ClaudeTranscript('01d00000-0000-4000-8000-000000000002', '/home/dev/app', OLD);
    const prompts: string[] = [];
    let at: string | null = null;
    for (let k = 1; k <= 3; k++) {
      const u = t.user(`step ${k}`, at);
      prompts.push(u);
      const call = t.response(u, [{ thinking: `plan ${k}` }, { tool: 'Read', input: { file: `f${k}` } }]);
      const result = t.result(call.tools[0]!, call.last, `content ${k}`);
      at = t.response(result, [{ text: `done ${k}` }]).last;
    }
    const path = writeTranscript(`${t.sessionId}.jsonl`, t.text());
    const before = await importOnce(path, 'claude-code', { quietMs: NEVER });
    expect(subjects(before.repo(t.sessionId), 'main')).toEqual(['turn 1: step 1', 'turn 2: step 2']);

    const a = await importOnce(path, 'claude-code');
    const b = await importOnce(path, 'claude-code');
    const repo = a.repo(t.sessionId);
    expect(Object.keys(refs(repo))).toEqual(['main']);
    expect(subjects(repo, 'main')).toEqual(['turn 1: step 1', 'turn 2: step 2', 'turn 3: step 3']);
    // Four nodes a turn (prompt, call, result, reply): commit k holds turns 1..k.
    expect(filesByCommit(repo, 'main').map((f) => f.length)).toEqual([5, 9, 13]);
    expect(filesByCommit(repo, 'main')[2]!.filter((f) => f.includes('-u-'))).toEqual(
      prompts.map((u, k) => messageFile(1 + 4 * k, 'user', u)),
    );
    // The turns committed before are the same commits: the quiet time only added the last.
    expect(git(repo, 'rev-parse', 'main~1').trim()).toBe(refs(before.repo(t.sessionId)).main);
    expect(refs(b.repo(t.sessionId))).toEqual(refs(repo));
    expect(fsck(repo)).toBe('');
  });

  // Where the writer stopped when the first import took the file as finished: inside a model
  // response (its tool call not logged yet: the node changes in place), between the call and its
  // result (new nodes in the same turn), and after the reply (the turn was final after all).
  const cuts = [
    { name: 'inside a response', lines: 3, recommitted: true },
    { name: 'between a call and its result', lines: 4, recommitted: true },
    { name: 'after the reply', lines: 6, recommitted: false },
  ];
  for (const cut of cuts) {
    it(`grows after it was imported as finished (${cut.name}): one commit per turn, the old one in the reflog`, async () => {
      const t = new ClaudeTranscript(`01d00000-0000-4000-8000-00000000000${cuts.indexOf(cut) + 3}`, '/tmp', OLD);
      const u1 = t.user('read the config', null);
      const call = t.response(u1, [{ thinking: 'where is it' }, { text: 'Reading.' }, { tool: 'Read' }]);
      const result = t.result(call.tools[0]!, call.last, 'port = 8080');
      const reply = t.response(result, [{ text: 'It listens on 8080.' }]);
      const u2 = t.user('thanks', reply.last);
      t.response(u2, [{ text: 'You are welcome.' }]);
      const lines = t.lines();
      const path = writeTranscript(`${t.sessionId}.jsonl`, lines.slice(0, cut.lines).join(''));
      const final = writeTranscript(`${t.sessionId}.jsonl`, t.text());
      const expected = refs((await importOnce(final, 'claude-code')).repo(t.sessionId));

      // Two runs of the command, each a process of its own, over one root.
      const first = importer(path, 'claude-code');
      await first.run();
      const repo = first.repo(t.sessionId);
      const interim = refs(repo).main!;
      expect(subjects(repo, 'main')).toEqual(['turn 1: read the config']);
      appendFileSync(path, lines.slice(cut.lines).join(''));
      const second = await importer(path, 'claude-code', first.root).run();
      expect(second).toMatchObject({ failures: [], warnings: [] });

      expect(refs(repo)).toEqual(expected);
      expect(subjects(repo, 'main')).toEqual(['turn 1: read the config', 'turn 2: thanks']);
      expect(git(repo, 'show', `main~1:${messageFile(2, 'assistant', call.records[0]!)}`)).toContain(
        '"type": "tool_use"',
      );
      expect(reflog(repo, 'main')).toEqual([expected.main!, interim]);
      if (cut.recommitted) {
        expect(() => git(repo, 'merge-base', '--is-ancestor', interim, 'main')).toThrow();
        expect(git(repo, 'rev-parse', 'main~1').trim()).not.toBe(interim);
      } else expect(git(repo, 'rev-parse', 'main~1').trim()).toBe(interim);
      expect(git(repo, 'status', '--porcelain')).toBe('');
      expect(fsck(repo)).toBe('');
    });
  }

  it('in one process, as a follower sees it: growth reopens the turn until it is quiet again', async () => {
    const { t, reply } = onePrompt('01d00000-0000-4000-8000-000000000006');
    const u2 = t.user('and hidden files?', reply.last);
    t.response(u2, [{ thinking: 'ls -a' }, { text: 'None.' }]);
    const lines = t.lines();
    // Up to the second response's first record: its text is not logged yet.
    const path = writeTranscript(`${t.sessionId}.jsonl`, lines.slice(0, 7).join(''));
    const final = writeTranscript(`${t.sessionId}.jsonl`, t.text());
    const expected = refs((await importOnce(final, 'claude-code')).repo(t.sessionId));

    let now = Date.now();
    const follow = importer(path, 'claude-code', undefined, { now: () => now });
    const repo = follow.repo(t.sessionId);
    // First read: its records are old, so it is finished; the second turn's response is cut.
    await follow.run();
    const interim = refs(repo).main!;
    expect(subjects(repo, 'main')).toEqual(['turn 1: list the files', 'turn 2: and hidden files?']);
    appendFileSync(path, lines.slice(7).join(''));
    // It grew just now: the turn is open again, and the branch shows the turns complete before it.
    const before = git(repo, 'rev-parse', `${interim}~1`).trim();
    const grown = await follow.run();
    expect(grown.entries.map((e) => [e.result.commitsWritten, e.open])).toEqual([[0, true]]);
    expect(refs(repo).main).toBe(before);
    now += 6 * MIN;
    const quiet = await follow.run();
    expect(quiet.entries.map((e) => [e.result.commitsWritten, e.open])).toEqual([[1, false]]);
    expect(refs(repo)).toEqual(expected);
    expect(git(repo, 'rev-parse', 'main~1').trim()).toBe(before);
    expect(reflog(repo, 'main')).toEqual([expected.main!, before, interim]);
    expect(fsck(repo)).toBe('');
    // Quiet and unchanged: nothing more to do.
    expect((await follow.run()).entries).toEqual([]);
  });
});
