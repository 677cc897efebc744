import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClaudeTranscript } from '../../transcripts/test/claude-fixture.js';
import { COMMAND, REPO_ROOT, gitRaw, json, revParseAll, run, tempDir } from './fixture.js';

// A writer in a process of its own: it appends each chunk record by record, and before each
// chunk after the first waits until the test says go — so its pause lasts until the watcher
// has taken the transcript as finished, however slow the machine is, and no time is asserted.
const WRITER = `
const fs = require('node:fs');
const [chunksFile, target, go] = process.argv.slice(1);
const chunks = JSON.parse(fs.readFileSync(chunksFile, 'utf8'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
(async () => {
  for (let i = 0; i < chunks.length; i++) {
    while (i > 0 && !fs.existsSync(go + '.' + i)) await sleep(50);
    for (const line of chunks[i]) {
      fs.appendFileSync(target, line);
      await sleep(20);
    }
  }
})();
`;

/** Polls until `ready()` holds, for up to two minutes (the machine is shared); returns whether it did. */
async function eventually(ready: () => boolean): Promise<boolean> {
  for (let i = 0; i < 480; i++) {
    try {
      if (ready()) return true;
    } catch {
      // not yet: no repository, no branch
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

describe('entity-git import --watch --quiet-time', () => {
  it('a writer that pauses mid-turn longer than the quiet time: the interim commit is replaced, one commit per turn', async () => {
    const id = 'dddd0000-0000-4000-8000-00000000000d';
    // An older version's transcript: nothing in it closes a turn, only quiet does.
    const t = new ClaudeTranscript(id, '/home/dev', '1.0.30');
    const u1 = t.user('read the config', null);
    const call = t.response(u1, [{ thinking: 'where is it' }, { text: 'Reading.' }, { tool: 'Read' }]);
    const result = t.result(call.tools[0]!, call.last, 'port = 8080');
    const reply = t.response(result, [{ text: 'It listens on 8080.' }]);
    const u2 = t.user('thanks', reply.last);
    t.response(u2, [{ text: 'You are welcome.' }]);
    const lines = t.lines();
    // Pauses: inside the model's response (its tool call not logged yet), then before the result.
    const chunks = [lines.slice(0, 3), lines.slice(3, 4), lines.slice(4)];

    const dir = tempDir('entity-git-claude-');
    const chunksFile = join(dir, 'chunks.json');
    writeFileSync(chunksFile, JSON.stringify(chunks));
    const projects = join(dir, 'projects');
    mkdirSync(join(projects, '-home-dev'), { recursive: true });
    const target = join(projects, '-home-dev', `${id}.jsonl`);
    writeFileSync(target, '');
    const go = join(dir, 'go');
    const reference = join(dir, `${id}.jsonl`);
    writeFileSync(reference, t.text());
    const refRoot = tempDir();
    json(await run(['import', 'claude-code', reference, '--root', refRoot, '--json']));
    const expected = revParseAll(join(refRoot, id));
    expect(Object.keys(expected).sort()).toEqual(['HEAD', 'main']);

    const root = tempDir();
    const repo = join(root, id);
    const callFile = `messages/000002-a-${call.records[0]}.json`;
    const watcher = spawn(
      COMMAND[0]!,
      [
        ...COMMAND.slice(1),
        'import',
        'claude-code',
        projects,
        '--root',
        root,
        '--watch',
        '--json',
        '--quiet-time',
        '1s',
      ],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    watcher.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    watcher.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<number | null>((done) => watcher.on('close', (code) => done(code)));
    const interim: string[] = [];
    try {
      const writer = spawn(process.execPath, ['-e', WRITER, chunksFile, target, go], { stdio: 'inherit' });
      const written = new Promise((done) => writer.on('close', done));
      // Paused inside the response: once quiet, turn 1 is committed as it stands (no tool call).
      expect(await eventually(() => !gitRaw(repo, 'show', `main:${callFile}`).includes('tool_use'))).toBe(true);
      interim.push(gitRaw(repo, 'rev-parse', 'main').trim());
      writeFileSync(`${go}.1`, '');
      // Paused after the call: turn 1 committed again, with its call, in place of the first.
      expect(await eventually(() => gitRaw(repo, 'show', `main:${callFile}`).includes('tool_use'))).toBe(true);
      interim.push(gitRaw(repo, 'rev-parse', 'main').trim());
      writeFileSync(`${go}.2`, '');
      await written;
      expect(await eventually(() => JSON.stringify(revParseAll(repo)) === JSON.stringify(expected))).toBe(true);
    } finally {
      // Whatever happened above, the watcher does not outlive the test.
      watcher.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
    expect(existsSync(`${go}.2`)).toBe(true);
    expect(revParseAll(repo)).toEqual(expected);
    // One commit per turn on the branch; the interim commits are no ancestors, the reflog keeps them.
    expect(gitRaw(repo, 'rev-list', '--count', 'main')).toBe('2\n');
    expect(gitRaw(repo, 'log', '--format=%s', 'main')).toBe('turn 2: thanks\nturn 1: read the config\n');
    const reflog = gitRaw(repo, 'reflog', '--format=%H', 'main').trim().split('\n');
    expect(reflog[0]).toBe(expected.main);
    for (const c of interim) {
      expect(reflog).toContain(c);
      expect(() => gitRaw(repo, 'merge-base', '--is-ancestor', c, 'main')).toThrow();
    }
    expect(new Set(interim).size).toBe(2);
    expect(gitRaw(repo, 'fsck', '--strict', '--no-progress')).toBe('');
    expect(gitRaw(repo, 'status', '--porcelain')).toBe('');
    const rounds = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { session: string });
    expect(rounds.every((r) => r.session === id)).toBe(true);
  });
});
