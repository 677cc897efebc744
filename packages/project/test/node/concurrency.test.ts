import { execFile } from 'node:child_process';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AfterTurnResult } from '@entity-git/core';
import { describe, expect, it } from 'vitest';
import { isolateGit, judge } from './judge.js';
import { builtChild } from '@entity-git/test-utils/node-child';

const run = promisify(execFile);
const child = builtChild(join(import.meta.dirname, 'turn-child.ts'));
const home = isolateGit();
const ROUNDS = 5;

async function race(engines: [string, string]) {
  const dir = await judge.tempDir();
  await judge.git(dir, 'init', '-q', '-b', 'main');
  await judge.write(`${dir}/README.md`, 'shared project\n');
  await judge.git(dir, 'add', '-A');
  await judge.git(dir, 'commit', '-q', '-m', 'initial');
  const barrier = await judge.tempDir();
  const lockDir = join(home, `locks-${engines.join('-')}`);
  const sessions = ['s1', 's2'];
  const outs = await Promise.all(
    sessions.map((s, i) =>
      run(process.execPath, [child, dir, s, String(ROUNDS), barrier, sessions.join(','), engines[i]!, lockDir], {
        cwd: process.cwd(),
        env: process.env,
      }),
    ),
  );
  const results = outs.map((o) => JSON.parse(o.stdout) as AfterTurnResult[]);
  return { dir, results, lockDir };
}

describe('two sessions in two processes finishing turns into one project at once', () => {
  for (const engines of [
    ['native', 'native'],
    ['iso', 'iso'],
    ['native', 'iso'],
  ] as [string, string][]) {
    it(`${engines.join(' + ')}: every edit lands, one commit per turn, serialized, nothing lost, fsck clean`, async () => {
      const { dir, results, lockDir } = await race(engines);
      // Each (session, turn) was committed exactly once: by its own afterTurn or, pending, by the other's.
      const landed = results
        .flat()
        .flatMap((r) => [...r.deferred, ...(r.status === 'committed' ? [r] : [])])
        .map((c) => `${c.sessionId}/${c.turn}:${c.paths.join(',')}`);
      const expected = ['s1', 's2'].flatMap((s) =>
        Array.from({ length: ROUNDS }, (_, i) => `${s}/${i + 1}:${s}/turn-${i + 1}.txt`),
      );
      expect(landed.sort()).toEqual(expected.sort());
      for (const r of results.flat()) if (r.status === 'skipped') expect(r.reason).toBe('uncommitted-changes');
      // The barrier makes every round contended: the first afterTurn finds the other's edit unreported and defers.
      expect(results.flat().filter((r) => r.status === 'skipped').length).toBeGreaterThanOrEqual(ROUNDS);

      expect(Number((await judge.git(dir, 'rev-list', '--count', 'HEAD')).trim())).toBe(1 + 2 * ROUNDS);
      expect((await judge.git(dir, 'rev-list', '--merges', 'HEAD')).trim()).toBe('');
      const log = (await judge.git(dir, 'log', '--format=%s|%cn', '-z', `HEAD~${2 * ROUNDS}..HEAD`))
        .split('\0')
        .filter(Boolean);
      const commits = (await judge.git(dir, 'rev-list', `HEAD~${2 * ROUNDS}..HEAD`)).trim().split('\n');
      for (const [i, c] of commits.entries()) {
        const paths = (await judge.git(dir, 'show', '--name-only', '--format=', c)).trim().split('\n');
        expect(paths).toHaveLength(1);
        const [, session, turn] = /^(s\d)\/turn-(\d+)\.txt$/.exec(paths[0]!)!;
        expect(log[i]!.split('|')[0]).toBe(`[agent ${session}] turn ${turn}: turn ${turn} of ${session}`);
      }
      // Every ref move is in the reflog: no update was lost or overwritten.
      expect((await judge.git(dir, 'reflog', 'show', '--format=%H', 'main')).trim().split('\n')).toHaveLength(
        1 + 2 * ROUNDS,
      );
      expect(await judge.git(dir, 'status', '--porcelain', '--untracked-files=all')).toBe('');
      expect(await judge.git(dir, 'fsck', '--strict')).toBe('');
      // No lock or pending journal is left: only the ledger of the agent's commits, one line each.
      const left = await fsp.readdir(lockDir).catch(() => []);
      expect(left.map((f) => f.replace(/^[0-9a-f]+\./, 'KEY.'))).toEqual(['KEY.agent-commits.jsonl']);
      const ledger = await fsp.readFile(join(lockDir, left[0]!), 'utf8');
      expect(ledger.trim().split('\n')).toHaveLength(2 * ROUNDS);
    });
  }
});
