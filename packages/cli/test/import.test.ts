import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClaudeTranscript } from '../../transcripts/test/claude-fixture.js';
import { COMMAND, REPO_ROOT, gitRaw, json, revParseAll, run, tempDir } from './fixture.js';

/** Two prompts with parallel tool calls, then a regenerated reply: main and one retry branch. */
function session(id: string): ClaudeTranscript {
  const t = new ClaudeTranscript(id);
  const u1 = t.user(`first prompt of ${id}`, null);
  const p = t.parallel(u1, ['Read', 'Grep', 'Grep']);
  const reply = t.response(p.last, [{ text: 'Read it.' }], { stop: 'end_turn' });
  t.response(p.last, [{ text: 'Read it, again.' }], { stop: 'end_turn' });
  const u2 = t.user('second prompt 😀', reply.last);
  const done = t.response(u2, [{ text: 'Done.' }]);
  t.system('turn_duration', done.last, { durationMs: 5 });
  return t;
}

function projectsDir(): { dir: string; ids: string[] } {
  const dir = tempDir('entity-git-claude-');
  const ids = ['aaaaaaaa-0000-4000-8000-000000000001', 'bbbbbbbb-0000-4000-8000-000000000002'];
  mkdirSync(join(dir, '-home-dev-one'));
  mkdirSync(join(dir, '-home-dev-two'));
  writeFileSync(join(dir, '-home-dev-one', `${ids[0]}.jsonl`), session(ids[0]!).text());
  writeFileSync(join(dir, '-home-dev-two', `${ids[1]}.jsonl`), session(ids[1]!).text());
  return { dir, ids };
}

describe('entity-git import', () => {
  it('claude-code: every session of a projects directory, idempotent, the same ids in two roots', async () => {
    const { dir, ids } = projectsDir();
    const rootA = tempDir();
    const rootB = tempDir();
    const first = json(await run(['import', 'claude-code', dir, '--root', rootA, '--json']));
    expect(first.ok).toBe(true);
    expect(first.sessions.map((s: { session: string }) => s.session)).toEqual(ids);
    expect(first.sessions.map((s: { commitsWritten: number }) => s.commitsWritten)).toEqual([3, 3]);
    const again = json(await run(['import', 'claude-code', dir, '--root', rootA, '--json']));
    expect(again.commitsWritten).toBe(0);
    expect(again.sessions.every((s: { noop: boolean }) => s.noop)).toBe(true);
    const other = await run(['import', 'claude-code', dir, '--root', rootB]);
    expect(other.code).toBe(0);
    expect(other.stdout).toContain(`imported 2 sessions into ${rootB}: 6 commits written`);
    for (const id of ids) {
      const a = revParseAll(join(rootA, id));
      expect(Object.keys(a).filter((r) => r !== 'HEAD').length).toBe(2);
      expect(revParseAll(join(rootB, id))).toEqual(a);
      expect(gitRaw(join(rootA, id), 'status', '--porcelain')).toBe('');
    }
  });

  it('messages: one session per file; a bad line is skipped with a warning (exit 4), refused with --strict (exit 2)', async () => {
    const dir = tempDir('entity-git-messages-');
    writeFileSync(
      join(dir, 'chat-a.json'),
      JSON.stringify([
        { role: 'user', content: 'hi', created_at: 1767312000 },
        { role: 'assistant', content: 'hello', created_at: 1767312001 },
      ]),
    );
    writeFileSync(
      join(dir, 'chat-b.jsonl'),
      '{"role":"user","content":"one"}\nnot json\n{"role":"assistant","content":"two"}\n',
    );
    const paths = [join(dir, 'chat-a.json'), join(dir, 'chat-b.jsonl')];
    const root = tempDir();
    const r = await run(['import', 'messages', ...paths, '--root', root, '--json']);
    expect(r.code).toBe(4);
    const out = JSON.parse(r.stdout);
    expect(out.sessions.map((s: { session: string; commitsWritten: number }) => [s.session, s.commitsWritten])).toEqual(
      [
        ['chat-a', 1],
        ['chat-b', 1],
      ],
    );
    expect(out.ok).toBe(true);
    expect(out.failed).toEqual([]);
    expect(out.warnings).toEqual([
      {
        path: join(dir, 'chat-b.jsonl'),
        session: 'chat-b',
        line: 2,
        column: 1,
        reason: 'not-json',
        message: expect.stringMatching(/^line 2 skipped: not JSON \(/),
      },
    ]);
    expect(gitRaw(join(root, 'chat-a'), 'log', '--format=%s %at', 'main')).toBe('turn 1: hi 1767312001\n');
    expect(gitRaw(join(root, 'chat-b'), 'log', '--format=%s', 'main')).toBe('turn 1: one\n');
    expect(gitRaw(join(root, 'chat-b'), 'ls-tree', '--name-only', '-r', 'main')).toBe(
      'messages/000001-u-m1.json\nmessages/000002-a-m2.json\nmeta.json\n',
    );

    const strictRoot = tempDir();
    const s = await run(['import', 'messages', ...paths, '--root', strictRoot, '--json', '--strict']);
    expect(s.code).toBe(2);
    const refused = JSON.parse(s.stdout);
    expect(refused.sessions.map((x: { session: string }) => x.session)).toEqual(['chat-a']);
    expect(refused.failed).toEqual([
      {
        path: join(dir, 'chat-b.jsonl'),
        session: null,
        code: 'TRANSCRIPT_INVALID',
        message: expect.stringContaining('line 2 is not JSON'),
      },
    ]);
    expect(s.stderr).toContain(`entity-git: ${join(dir, 'chat-b.jsonl')}: line 2 is not JSON`);
    expect(existsSync(join(strictRoot, 'chat-b'))).toBe(false);
  });

  it('codex: the rollouts of a sessions directory by date', async () => {
    const dir = tempDir('entity-git-codex-');
    mkdirSync(join(dir, '2026', '02', '03'), { recursive: true });
    const at = (s: number) => new Date(Date.UTC(2026, 1, 3, 4, 5, s)).toISOString();
    const lines = [
      { timestamp: at(0), type: 'session_meta', payload: { id: 'x', cwd: '/home/dev' } },
      {
        timestamp: at(1),
        type: 'response_item',
        payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] },
      },
      {
        timestamp: at(2),
        type: 'response_item',
        payload: { type: 'function_call', name: 'shell', arguments: '{}', call_id: 'c1' },
      },
      {
        timestamp: at(3),
        type: 'response_item',
        payload: { type: 'function_call_output', call_id: 'c1', output: 'ok' },
      },
      {
        timestamp: at(4),
        type: 'response_item',
        payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi' }] },
      },
      { timestamp: at(5), type: 'event_msg', payload: { type: 'task_complete' } },
    ];
    const name = 'rollout-2026-02-03T04-05-00-0199aaaa-0000-7000-8000-000000000001';
    writeFileSync(join(dir, '2026', '02', '03', `${name}.jsonl`), lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    const root = tempDir();
    const out = json(await run(['import', 'codex', dir, '--root', root, '--json']));
    expect(
      out.sessions.map((s: { session: string; nodes: number; commitsWritten: number }) => [
        s.session,
        s.nodes,
        s.commitsWritten,
      ]),
    ).toEqual([[name, 4, 1]]);
    expect(gitRaw(join(root, name), 'log', '--format=%s|%b', 'main')).toContain(
      'turn 1: hello|assistant: hi\ntools: shell',
    );
  });

  it('usage errors', async () => {
    const missing = await run(['import', 'messages']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('import messages: missing FILE…');
    const db = await run(['import', 'claude-code', tempDir(), '--db', 'x.db']);
    expect(db.code).toBe(2);
    expect(db.stderr).toContain('takes no --db');
    const help = await run(['import', '--help']);
    expect(help.stdout).toContain(
      'Usage: entity-git import claude-code [DIR] [--watch] [--quiet-time T] [--strict] [--json]',
    );
  });

  it('--watch follows a transcript another process is writing, committing each turn once complete', async () => {
    const id = 'cccccccc-0000-4000-8000-000000000003';
    const dir = tempDir('entity-git-claude-');
    const source = join(dir, 'source.jsonl');
    const t = session(id);
    writeFileSync(source, t.text());
    const projects = join(dir, 'projects');
    mkdirSync(join(projects, '-home-dev'), { recursive: true });
    const target = join(projects, '-home-dev', `${id}.jsonl`);
    writeFileSync(target, '');
    const root = tempDir();
    const watcher = spawn(
      COMMAND[0]!,
      [...COMMAND.slice(1), 'import', 'claude-code', projects, '--root', root, '--watch', '--json'],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    watcher.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    watcher.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<number | null>((done) => watcher.on('close', (code) => done(code)));
    let expected: Record<string, string>;
    try {
      // The writer appends each record in two pieces, so the watcher meets torn lines.
      const writer = spawn(
        process.execPath,
        [
          '-e',
          `
        const fs = require('node:fs');
        const lines = fs.readFileSync(process.argv[1], 'utf8').split(/(?<=\\n)/);
        const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
        (async () => {
          for (const line of lines) {
            const cut = Math.floor(line.length / 2);
            fs.appendFileSync(process.argv[2], line.slice(0, cut));
            await sleep(40);
            fs.appendFileSync(process.argv[2], line.slice(cut));
            await sleep(40);
          }
        })();
      `,
          source,
          target,
        ],
        { stdio: 'inherit' },
      );
      await new Promise((done) => writer.on('close', done));

      const reference = tempDir();
      writeFileSync(join(reference, `${id}.jsonl`), t.text());
      const refRoot = tempDir();
      json(await run(['import', 'claude-code', join(reference, `${id}.jsonl`), '--root', refRoot, '--json']));
      expected = revParseAll(join(refRoot, id));
      // Generous: the watcher polls every 500 ms on a shared machine.
      for (let i = 0; i < 240; i++) {
        let now: Record<string, string> | null = null;
        try {
          now = revParseAll(join(root, id));
        } catch {
          // No repository yet.
        }
        if (now && JSON.stringify(now) === JSON.stringify(expected)) break;
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      // Whatever happened above, the watcher does not outlive the test.
      watcher.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
    expect(revParseAll(join(root, id))).toEqual(expected);
    const rounds = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { session: string; commitsWritten: number });
    // Written over many rounds, never more commits in all than the three the file holds.
    expect(rounds.every((r) => r.session === id)).toBe(true);
    expect(rounds.reduce((s, r) => s + r.commitsWritten, 0)).toBe(3);
    expect(gitRaw(join(root, id), 'status', '--porcelain')).toBe('');
  });
});
