import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createNodeMirror } from '@entity-git/node-fs';
import { TranscriptDag } from '../src/index.js';
import { importTranscripts, TranscriptFile } from '../src/node/index.js';
import { ClaudeTranscript } from './claude-fixture.js';
import { cleanupRoots, fsck, git, refs, tempRoot } from './git-helpers.js';

afterAll(cleanupRoots);

/** A session with tools, a regenerated reply and an edited prompt: six prompts in all. */
function conversation(): ClaudeTranscript {
  const t = new ClaudeTranscript('0a7c1e55-0000-4000-8000-00000000abcd');
  let at = t.user('start', null);
  for (let i = 0; i < 4; i++) {
    const p = t.parallel(at, ['Read', 'Grep', 'Grep'].slice(0, 1 + (i % 3)), `step ${i}`);
    const reply = t.response(p.last, [{ text: `reply ${i} 😀` }], { stop: 'end_turn' });
    if (i === 1) t.response(p.last, [{ text: 'another take' }], { stop: 'end_turn' });
    at = t.user(`prompt ${i + 2}`, reply.last);
    if (i === 2) t.user(`prompt ${i + 2}, edited`, reply.last);
  }
  const last = t.response(at, [{ text: 'bye' }]);
  t.system('turn_duration', last.last, { durationMs: 10 });
  return t;
}

async function importInto(root: string, file: string) {
  const dag = new TranscriptDag();
  const mirror = createNodeMirror({ dag, root });
  const transcript = new TranscriptFile(file, 'claude-code');
  // Never finished by time: this test is about the transcript's own marks alone.
  return {
    mirror,
    run: () => importTranscripts({ files: [transcript], dag, mirror, quietMs: Number.POSITIVE_INFINITY }),
  };
}

describe('incremental import of a growing transcript', () => {
  it('gives, after every appended piece, commits the complete file keeps: earlier ids never change', async () => {
    const t = conversation();
    const bytes = t.bytes();
    const dir = tempRoot();
    const full = join(dir, `${t.sessionId}.jsonl`);
    writeFileSync(full, bytes);
    const whole = await importInto(tempRoot(), full);
    const {
      entries: [entry],
    } = await whole.run();
    const expected = refs(entry!.result.sessionId === t.sessionId ? whole.mirror.repoPath(t.sessionId) : '');
    expect(Object.keys(expected).length).toBe(3);
    // Importing again is a no-op.
    expect(await whole.run()).toEqual({ entries: [], failures: [], warnings: [] });

    const growing = join(tempRoot(), `${t.sessionId}.jsonl`);
    writeFileSync(growing, '');
    const inc = await importInto(tempRoot(), growing);
    const seen: [string, string][] = [];
    // Pieces that cut lines anywhere, torn UTF-8 included.
    for (let at = 0; at < bytes.length; at += 997) {
      appendFileSync(growing, bytes.subarray(at, Math.min(at + 997, bytes.length)));
      expect((await inc.run()).failures).toEqual([]);
      const repo = inc.mirror.repoPath(t.sessionId);
      try {
        for (const [name, oid] of Object.entries(refs(repo))) seen.push([name, oid]);
      } catch {
        // No repository before the first complete turn.
      }
    }
    const repo = inc.mirror.repoPath(t.sessionId);
    expect(refs(repo)).toEqual(expected);
    expect(seen.length).toBeGreaterThan(10);
    for (const [name, oid] of seen) {
      try {
        git(repo, 'merge-base', '--is-ancestor', oid, expected[name]!);
      } catch {
        throw new Error(
          `${name} ${oid} is no ancestor of ${expected[name]}:\n${git(repo, 'log', '-1', '--format=%B', '--name-only', oid)}\nvs\n${git(repo, 'log', '--format=%B', '--name-only', expected[name]!)}`,
        );
      }
    }
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(fsck(repo)).toBe('');
  });
});
