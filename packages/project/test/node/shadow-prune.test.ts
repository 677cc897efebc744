// Bounded growth: the newest N turns' snapshots are kept, older ones pruned and their objects gone,
// while the kept turns still list, diff and restore, and native git finds the repository sound.
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ShadowProjectGit, ShadowRepository } from '../../src/node/index.js';
import { isolateGit, judge } from './judge.js';

isolateGit();

describe('shadow snapshots: bounded growth', () => {
  it('keeps the newest turns, prunes the objects only older turns held, and stays sound', async () => {
    const workdir = await judge.tempDir();
    const root = join(await judge.tempDir(), 'shadow');
    // keepTurns 2: the project holds at most 3 turns before a prune brings it back to 2.
    const projectGit = new ShadowProjectGit({ root, keepTurns: 2 });
    for (let n = 1; n <= 4; n++) {
      const snapshot = await projectGit.beforeTurn(workdir);
      await judge.write(join(workdir, `turn-${n}.txt`), `only turn ${n} wrote this\n`);
      await judge.write(join(workdir, 'log.txt'), `state after turn ${n}\n`);
      await projectGit.afterTurn({
        workdir,
        sessionId: 's1',
        turn: n,
        userMessage: '',
        model: 'm',
        touchedPaths: [],
        snapshot,
      });
    }
    const repo = await ShadowRepository.open({ root, workdir });
    const gitDir = join(repo.dir, 'git');
    const shadow = (...args: string[]) => judge.git(workdir, `--git-dir=${gitDir}`, ...args);
    // Turn 4 brought the count to 4 > 2 + 1: turns 1 and 2 were pruned.
    await expect(projectGit.listTurnFiles({ workdir, sessionId: 's1', turn: 1 })).rejects.toMatchObject({
      code: 'SNAPSHOT_NOT_FOUND',
    });
    await expect(projectGit.listTurnFiles({ workdir, sessionId: 's1', turn: 2 })).rejects.toMatchObject({
      code: 'SNAPSHOT_NOT_FOUND',
    });
    const turn3 = await projectGit.listTurnFiles({ workdir, sessionId: 's1', turn: 3 });
    expect(turn3.files.map((f) => f.path)).toEqual(['log.txt', 'turn-3.txt']);
    // The state after turn 1 of log.txt was held only by pruned snapshots: its blob is gone.
    await fsp.writeFile(join(workdir, 'probe.txt'), 'state after turn 1\n');
    const gone = (await judge.git(workdir, 'hash-object', '--no-filters', join(workdir, 'probe.txt'))).trim();
    await fsp.rm(join(workdir, 'probe.txt'));
    expect(await judge.gitCode(workdir, `--git-dir=${gitDir}`, 'cat-file', '-e', gone)).not.toBe(0);
    await shadow('fsck', '--strict', '--no-progress');
    expect(await shadow('count-objects', '-v')).toContain('count: 0\n');
    // The kept turns restore as before.
    const r = await projectGit.restoreTurnFiles({ workdir, sessionId: 's1', turn: 4 });
    expect(r.paths).toEqual(['log.txt', 'turn-4.txt']);
    expect(await fsp.readFile(join(workdir, 'log.txt'), 'utf8')).toBe('state after turn 3\n');
    expect(await projectGit.pruneSnapshots(workdir, 1)).toEqual({ kept: 1, dropped: 1 });
    await shadow('fsck', '--strict', '--no-progress');
  });

  /** One turn of `files` files through a project git; returns what native git counts in the shadow repository. */
  async function oneTurn(files: number): Promise<{ loose: number; inPack: number; gitDir: string; workdir: string }> {
    const workdir = await judge.tempDir();
    for (let d = 0; d < files / 100; d++) {
      await fsp.mkdir(join(workdir, `d${d}`));
      for (let f = 0; f < 100; f++) await fsp.writeFile(join(workdir, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`);
    }
    const root = join(await judge.tempDir(), 'shadow');
    const projectGit = new ShadowProjectGit({ root });
    const snapshot = await projectGit.beforeTurn(workdir);
    await judge.write(join(workdir, 'd0', 'f0.txt'), 'edited in the turn\n');
    await projectGit.afterTurn({
      workdir,
      sessionId: 's1',
      turn: 1,
      userMessage: '',
      model: 'm',
      touchedPaths: [],
      snapshot,
    });
    const gitDir = join((await ShadowRepository.open({ root, workdir })).dir, 'git');
    const counts = await judge.git(workdir, `--git-dir=${gitDir}`, 'count-objects', '-v');
    const count = (name: string) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(counts)?.[1]);
    return { loose: count('count'), inPack: count('in-pack'), gitDir, workdir };
  }

  it("packs a first snapshot's many loose objects after the turn, and leaves a few loose", async () => {
    // 10,000 files: their blobs put 35 in objects/17, past git's own gc.auto sample of 27.
    const big = await oneTurn(10_000);
    expect(big.loose).toBe(0);
    // Every blob, the trees of both snapshots (the root, 100 directories, one changed) and two commits.
    expect(big.inPack).toBe(10_000 + 1 + 1 + 100 + 1 + 1 + 2);
    await judge.git(big.workdir, `--git-dir=${big.gitDir}`, 'fsck', '--strict', '--no-progress');
    // 1,000 files (3 in objects/17): left loose for the next prune to pack.
    const small = await oneTurn(1_000);
    expect(small).toMatchObject({ loose: 1_000 + 1 + 1 + 10 + 1 + 1 + 2, inPack: 0 });
  }, 300_000);
});
