import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClaudeTranscript } from '../../transcripts/test/claude-fixture.js';
import { gitRaw, json, revParseAll, run, tempDir } from './fixture.js';

const OLD = 'aaaa0000-0000-4000-8000-00000000000a';
const GARBLED = 'bbbb0000-0000-4000-8000-00000000000b';
const TWICE = 'cccc0000-0000-4000-8000-00000000000c';

/** A session as an older Claude Code wrote it: one prompt, a reply, no stop_reason, no turn-end record. */
function older(id: string): ClaudeTranscript {
  const t = new ClaudeTranscript(id, '/home/dev', '1.0.30');
  const u = t.user(`question of ${id.slice(0, 4)}`, null);
  t.response(u, [{ text: 'An answer.' }]);
  return t;
}

/** A projects directory: an older session, one with a garbage line, and one session id in two projects. */
function projects(): { dir: string; garbled: string; second: string } {
  const dir = tempDir('entity-git-claude-');
  for (const p of ['-home-dev-a', '-home-dev-b', '-home-dev-c']) mkdirSync(join(dir, p));
  writeFileSync(join(dir, '-home-dev-a', `${OLD}.jsonl`), older(OLD).text());
  const lines = older(GARBLED).lines();
  const garbled = join(dir, '-home-dev-a', `${GARBLED}.jsonl`);
  writeFileSync(garbled, [lines[0], '<<<<<<< HEAD\n', ...lines.slice(1)].join(''));
  writeFileSync(join(dir, '-home-dev-b', `${TWICE}.jsonl`), older(TWICE).text());
  const second = join(dir, '-home-dev-c', `${TWICE}.jsonl`);
  writeFileSync(second, older(TWICE).text());
  return { dir, garbled, second };
}

describe('entity-git import: the summary and the exit code', () => {
  it('counts sessions imported, unchanged, with warnings and failed; the exit code tells them apart', async () => {
    const { dir, garbled, second } = projects();
    const root = tempDir();

    // A failure beats warnings: exit 2, the failed session named with its code.
    const first = await run(['import', 'claude-code', dir, '--root', root, '--json']);
    expect(first.code).toBe(2);
    const out = JSON.parse(first.stdout);
    expect(out.summary).toEqual({
      sessions: 4,
      imported: 3,
      unchanged: 0,
      withWarnings: 1,
      failed: 1,
      open: 0,
      failures: [{ path: second, session: null, code: 'TRANSCRIPT_INVALID' }],
    });
    expect(out.warnings).toEqual([
      {
        path: garbled,
        session: GARBLED,
        line: 2,
        column: 1,
        reason: 'not-json',
        message: expect.stringMatching(/^line 2 skipped: not JSON \(/),
      },
    ]);
    expect(
      out.sessions.map((s: { session: string; commitsWritten: number; open: boolean }) => [
        s.session,
        s.commitsWritten,
        s.open,
      ]),
    ).toEqual([
      [OLD, 1, false],
      [GARBLED, 1, false],
      [TWICE, 1, false],
    ]);
    expect(gitRaw(join(root, OLD), 'log', '--format=%s', 'main')).toBe(`turn 1: question of ${OLD.slice(0, 4)}\n`);
    expect(gitRaw(join(root, GARBLED), 'ls-tree', '-r', '--name-only', 'main').split('\n').length).toBe(4);

    // Warnings alone: exit 4, the summary on stderr, each skipped line named.
    rmSync(second);
    const again = await run(['import', 'claude-code', dir, '--root', root]);
    expect(again.code).toBe(4);
    expect(again.stdout).toContain(`imported 3 sessions into ${root}: 0 commits written`);
    expect(again.stderr).toMatch(
      new RegExp(
        `^entity-git: warning: ${garbled.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: line 2 skipped: not JSON \\(`,
        'm',
      ),
    );
    expect(again.stderr).toContain(
      'summary: 3 sessions: 0 imported, 3 unchanged, 1 with warnings, 0 failed, 0 still being written\n',
    );

    // --strict refuses the damaged transcript: exit 2, named on stderr.
    const strict = await run(['import', 'claude-code', dir, '--root', tempDir(), '--strict']);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain(`entity-git: ${garbled}: line 2 is not JSON`);
    expect(strict.stderr).toContain('summary: 3 sessions: 2 imported, 0 unchanged, 0 with warnings, 1 failed');
    expect(strict.stderr).toContain(`failed: ${garbled}: TRANSCRIPT_INVALID\n`);

    // Nothing wrong: exit 0; the ids equal those in another root.
    rmSync(garbled);
    const clean = await run(['import', 'claude-code', dir, '--root', root, '--json']);
    expect(clean.code).toBe(0);
    expect(json(clean).summary).toMatchObject({ sessions: 2, imported: 0, unchanged: 2, withWarnings: 0, failed: 0 });
    const other = tempDir();
    expect((await run(['import', 'claude-code', dir, '--root', other])).code).toBe(0);
    for (const id of [OLD, TWICE]) expect(revParseAll(join(other, id))).toEqual(revParseAll(join(root, id)));
  });

  it('--quiet-time: how long a transcript must be quiet to be finished; a bad value is a usage error', async () => {
    const dir = tempDir('entity-git-claude-');
    const file = join(dir, `${OLD}.jsonl`);
    writeFileSync(file, older(OLD).text());
    // Longer than the records are old: the turn waits, and the summary says it is being written.
    const waiting = await run(['import', 'claude-code', file, '--root', tempDir(), '--quiet-time', '100000h']);
    expect(waiting.code).toBe(0);
    expect(waiting.stdout).toContain('0 commits (2 messages, HEAD main; its last turn is still being written)');
    expect(waiting.stderr).toContain('1 still being written');
    for (const quiet of ['0', '30s', '5m', '1500ms', '90']) {
      const r = await run(['import', 'claude-code', file, '--root', tempDir(), '--quiet-time', quiet, '--json']);
      expect([quiet, r.code, json(r).commitsWritten]).toEqual([quiet, 0, 1]);
    }
    for (const bad of ['soon', '5 m', '-1s', '']) {
      const r = await run(['import', 'claude-code', file, '--root', tempDir(), `--quiet-time=${bad}`]);
      expect([bad, r.code]).toEqual([bad, 2]);
      expect(r.stderr).toContain('--quiet-time takes a duration such as 30s, 5m or 0');
    }
  });
});
