// Two processes taking turns in one project at once, both in shadow mode: their snapshots and
// restores meet on the shadow repository's lock file, so none fails on the other's index.lock,
// every turn has its snapshots holding its own file, and native git finds the repository sound.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RestoreResult } from '@entity-git/core';
import { builtChild } from '@entity-git/test-utils/node-child';
import { afterAll, describe, expect, it } from 'vitest';
import { closeShadowWatchers, ShadowRepository, SNAPSHOTS_REF, turnRef } from '../../src/node/index.js';
import { freshTree } from './fresh-tree.js';
import { isolateGit, judge } from './judge.js';

const run = promisify(execFile);
const child = builtChild(join(import.meta.dirname, 'shadow-turn-child.ts'));
isolateGit();
afterAll(() => closeShadowWatchers());
const ROUNDS = 4;

describe('shadow repositories across processes', () => {
  it('two processes snapshot and restore one project at once: nothing fails, nothing is lost, fsck is clean', async () => {
    const workdir = await judge.tempDir();
    const root = join(await judge.tempDir(), 'shadow');
    await judge.write(join(workdir, 'README.md'), 'shared project\n');
    const barrier = await judge.tempDir();
    const sessions = ['sa', 'sb'];
    const outs = await Promise.all(
      sessions.map((s) =>
        run(process.execPath, [child, root, workdir, s, String(ROUNDS), barrier, sessions.join(',')], {
          env: process.env,
        }),
      ),
    );
    const restores = outs.map((o) => JSON.parse(o.stdout) as RestoreResult);

    const repo = await ShadowRepository.open({ root, workdir, watch: false });
    const shadow = (...args: string[]) => judge.git(workdir, `--git-dir=${join(repo.dir, 'git')}`, ...args);
    for (const s of sessions)
      for (let turn = 1; turn <= ROUNDS; turn++) {
        // Each turn's after-snapshot holds the file its own process wrote in it.
        expect(await shadow('show', `${turnRef(s, turn, 'after')}:${s}/turn-${turn}.txt`)).toBe(`${s} turn ${turn}\n`);
        expect(await shadow('rev-parse', '--verify', '-q', turnRef(s, turn, 'before'))).toMatch(/^[0-9a-f]{40}\n$/);
      }
    // Both restores of a first turn ran; the first-turn files are gone, the later ones stay.
    expect(restores.flatMap((r) => r.paths).sort()).toEqual(expect.arrayContaining(['sa/turn-1.txt', 'sb/turn-1.txt']));
    expect(await judge.exists(join(workdir, 'sa', 'turn-1.txt'))).toBe(false);
    expect(await judge.exists(join(workdir, 'sb', 'turn-1.txt'))).toBe(false);
    // A later file is gone only where a restore put it back to before its first turn: the other
    // process may have written its next turn's file before this turn's after-snapshot, and a
    // turn's change is the difference between its snapshots, whoever made it.
    const restored = new Set(restores.flatMap((r) => r.paths));
    for (const s of sessions)
      for (let turn = 2; turn <= ROUNDS; turn++) {
        const path = `${s}/turn-${turn}.txt`;
        expect({ path, exists: await judge.exists(join(workdir, path)) }).toEqual({
          path,
          exists: !restored.has(path),
        });
      }
    // The newest snapshot is the work tree as native git sees it, and the repository is sound.
    const latest = await repo.snapshot({ kind: 'before' });
    expect((await shadow('rev-parse', `${latest.commit}^{tree}`)).trim()).toBe(await freshTree(workdir));
    expect((await shadow('rev-parse', SNAPSHOTS_REF)).trim()).toBe(latest.commit);
    await shadow('fsck', '--strict', '--no-progress');
    expect(await judge.exists(join(repo.dir, 'lock'))).toBe(false);
  }, 240_000);
});
