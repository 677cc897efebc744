// Damaged transcripts, as they are found on disks: a damaged line costs that line only. Each
// case is compared with the transcript as it should have been written, imported into a root
// of its own.
import { appendFileSync, existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { ClaudeTranscript } from './claude-fixture.js';
import { cleanupRoots, fsck, git, refs } from './git-helpers.js';
import { filesByCommit, importer, importOnce, messageFile, subjects, writeTranscript } from './import-helpers.js';

afterAll(cleanupRoots);

/** Two turns, a tool call in the first, a bookkeeping record between them; closed by its marks. */
function conversation(id: string) {
  const t = new ClaudeTranscript(id);
  const u1 = t.user('check the build', null);
  const call = t.response(u1, [{ text: 'Building.' }, { tool: 'Bash', input: { command: 'make' } }]);
  const result = t.result(call.tools[0]!, call.last, 'ok');
  const reply = t.response(result, [{ text: 'It builds.' }], { stop: 'end_turn' });
  t.bookkeeping('file-history-snapshot');
  const u2 = t.user('and the tests?', reply.last);
  const reply2 = t.response(u2, [{ text: 'They pass.' }], { stop: 'end_turn' });
  t.system('turn_duration', reply2.last, { durationMs: 1200 });
  return { t, u1, call, result, reply, u2, reply2 };
}

/** What the undamaged transcript gives: its refs, subjects and files, from a root of its own. */
async function reference(t: ClaudeTranscript) {
  const clean = await importOnce(writeTranscript(`${t.sessionId}.jsonl`, t.text()), 'claude-code');
  const repo = clean.repo(t.sessionId);
  return { refs: refs(repo), subjects: subjects(repo, 'main'), files: filesByCommit(repo, 'main') };
}

describe('a damaged line costs that line only', () => {
  it('a line holding two records gives both: the same commits as the lines written apart', async () => {
    const { t, u1, call, result, reply, u2, reply2 } = conversation('0dama9e0-0000-4000-8000-000000000001');
    const lines = t.lines();
    // The tool call's second record and its result written with no newline between them.
    const joined = [...lines.slice(0, 2), lines[2]!.trimEnd() + lines[3]!, ...lines.slice(4)].join('');
    const path = writeTranscript(`${t.sessionId}.jsonl`, joined);
    const a = await importOnce(path, 'claude-code');
    const b = await importOnce(path, 'claude-code');
    expect(a.report).toMatchObject({ failures: [], warnings: [] });
    const repo = a.repo(t.sessionId);
    const expected = await reference(t);
    expect(refs(repo)).toEqual(expected.refs);
    expect(refs(b.repo(t.sessionId))).toEqual(expected.refs);
    expect(Object.keys(refs(repo))).toEqual(['main']);
    expect(subjects(repo, 'main')).toEqual(['turn 1: check the build', 'turn 2: and the tests?']);
    expect(filesByCommit(repo, 'main')).toEqual([
      [
        messageFile(1, 'user', u1),
        messageFile(2, 'assistant', call.records[0]!),
        messageFile(3, 'tool', result),
        messageFile(4, 'assistant', reply.records[0]!),
        'meta.json',
      ],
      [
        messageFile(1, 'user', u1),
        messageFile(2, 'assistant', call.records[0]!),
        messageFile(3, 'tool', result),
        messageFile(4, 'assistant', reply.records[0]!),
        messageFile(5, 'user', u2),
        messageFile(6, 'assistant', reply2.records[0]!),
        'meta.json',
      ],
    ]);
    expect(fsck(repo)).toBe('');
  });

  it('a garbage line and a record cut off in the middle are skipped, named by line; --strict refuses', async () => {
    const { t } = conversation('0dama9e0-0000-4000-8000-000000000002');
    const lines = t.lines();
    const snapshot = lines.findIndex((l) => l.includes('"file-history-snapshot"'));
    const damaged = [
      ...lines.slice(0, 2),
      '\u0001\u0002 not a record {\n',
      ...lines.slice(2, snapshot),
      `${lines[snapshot]!.slice(0, 40)}\n`,
      ...lines.slice(snapshot + 1),
    ].join('');
    const path = writeTranscript(`${t.sessionId}.jsonl`, damaged);
    const logged: [string, unknown][] = [];
    const logger = {
      debug: () => {},
      info: () => {},
      warn: (event: string, fields: unknown) => logged.push([event, fields]),
      error: () => {},
    };
    const a = await importOnce(path, 'claude-code', { logger });
    const b = await importOnce(path, 'claude-code');
    expect(a.report.failures).toEqual([]);
    expect(logged).toEqual(
      a.report.warnings.map((w) => [
        'transcript.line-skipped',
        { path, session: t.sessionId, line: w.line, column: w.column, reason: w.reason, warning: w.warning },
      ]),
    );
    expect(a.report.warnings).toEqual([
      {
        path,
        sessionId: t.sessionId,
        line: 3,
        column: 1,
        reason: 'not-json',
        warning: expect.stringMatching(/^line 3 skipped: not JSON \(/),
      },
      {
        path,
        sessionId: t.sessionId,
        line: snapshot + 2,
        column: 1,
        reason: 'cut-off',
        warning: `line ${snapshot + 2} skipped: a record cut off`,
      },
    ]);
    // The cut record was bookkeeping: without it the conversation is whole.
    const repo = a.repo(t.sessionId);
    const expected = await reference(t);
    expect(refs(repo)).toEqual(expected.refs);
    expect(refs(b.repo(t.sessionId))).toEqual(expected.refs);
    expect(subjects(repo, 'main')).toEqual(expected.subjects);
    expect(filesByCommit(repo, 'main')).toEqual(expected.files);
    expect(fsck(repo)).toBe('');

    const strict = await importOnce(path, 'claude-code', { strict: true });
    expect(strict.report.entries).toEqual([]);
    expect(strict.report.failures).toEqual([
      { path, error: expect.objectContaining({ code: 'TRANSCRIPT_INVALID', data: { line: 3 } }) },
    ]);
    expect(existsSync(strict.repo(t.sessionId))).toBe(false);
  });

  it('a torn last line waits while the file may grow; once finished it is skipped with a warning', async () => {
    // An older version's transcript: only the quiet time closes its last turn.
    const t = new ClaudeTranscript('0dama9e0-0000-4000-8000-000000000003', '/home/dev', '1.0.30');
    const u1 = t.user('hello', null);
    const r1 = t.response(u1, [{ text: 'Hi.' }]);
    const u2 = t.user('how are you? 😀', r1.last);
    const r2 = t.response(u2, [{ text: 'Fine.' }]);
    const lines = t.lines();
    // Cut inside the emoji's four UTF-8 bytes: the tail is not even text.
    const cut = Buffer.from(lines[2]!).indexOf(Buffer.from('😀')) + 2;
    const torn = Buffer.concat([Buffer.from(lines.slice(0, 2).join('')), Buffer.from(lines[2]!).subarray(0, cut)]);
    const path = writeTranscript(`${t.sessionId}.jsonl`, torn);

    const waiting = await importOnce(path, 'claude-code', { quietMs: Number.POSITIVE_INFINITY });
    expect(waiting.report).toMatchObject({ failures: [], warnings: [] });
    expect(refs(waiting.repo(t.sessionId))).toEqual({});

    const a = importer(path, 'claude-code');
    const first = await a.run();
    expect(first.warnings).toEqual([
      {
        path,
        sessionId: t.sessionId,
        line: 3,
        column: 1,
        reason: 'cut-off',
        warning: 'line 3 skipped: a record cut off (the last line, without its newline)',
      },
    ]);
    const repo = a.repo(t.sessionId);
    expect(subjects(repo, 'main')).toEqual(['turn 1: hello']);
    expect(filesByCommit(repo, 'main')).toEqual([
      [messageFile(1, 'user', u1), messageFile(2, 'assistant', r1.records[0]!), 'meta.json'],
    ]);
    const other = await importOnce(path, 'claude-code');
    expect(refs(other.repo(t.sessionId))).toEqual(refs(repo));
    expect(fsck(repo)).toBe('');

    const strict = await importOnce(path, 'claude-code', { strict: true });
    expect(strict.report.failures).toEqual([
      { path, error: expect.objectContaining({ code: 'TRANSCRIPT_INVALID', data: { line: 3 } }) },
    ]);

    // The writer was not dead after all: the line is finished, the reply follows.
    appendFileSync(path, Buffer.concat([Buffer.from(lines[2]!).subarray(cut), Buffer.from(lines[3]!)]));
    const again = await importer(path, 'claude-code', a.root).run();
    expect(again).toMatchObject({ failures: [], warnings: [] });
    expect(refs(repo)).toEqual((await reference(t)).refs);
    expect(filesByCommit(repo, 'main')[1]).toEqual([
      messageFile(1, 'user', u1),
      messageFile(2, 'assistant', r1.records[0]!),
      messageFile(3, 'user', u2),
      messageFile(4, 'assistant', r2.records[0]!),
      'meta.json',
    ]);
    expect(fsck(repo)).toBe('');
  });

  it('a finished transcript whose last record has no newline is read whole, without a warning', async () => {
    const t = new ClaudeTranscript('0dama9e0-0000-4000-8000-000000000004', '/home/dev', '1.0.30');
    const u1 = t.user('one more thing', null);
    const r1 = t.response(u1, [{ text: 'Sure.' }]);
    const path = writeTranscript(`${t.sessionId}.jsonl`, t.text().trimEnd());
    // Not finished, the last line waits: the reply is not read, the turn is open.
    const open = await importOnce(path, 'claude-code', { quietMs: Number.POSITIVE_INFINITY });
    expect(open.report.entries.map((e) => [e.nodes, e.open])).toEqual([[1, true]]);
    const a = await importOnce(path, 'claude-code');
    expect(a.report).toMatchObject({ failures: [], warnings: [] });
    const repo = a.repo(t.sessionId);
    expect(refs(repo)).toEqual((await reference(t)).refs);
    expect(filesByCommit(repo, 'main')).toEqual([
      [messageFile(1, 'user', u1), messageFile(2, 'assistant', r1.records[0]!), 'meta.json'],
    ]);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(fsck(repo)).toBe('');
  });
});
