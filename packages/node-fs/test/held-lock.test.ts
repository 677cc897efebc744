// A `refs/heads/main.lock` held by someone else — a test-made file, or a real native git holding it
// in an open `update-ref --stdin` transaction — while a session sync runs: the sync waits and never
// writes through; released within the lock timeout, the sync lands with the ids of an undisturbed
// run; never released, `REF_LOCKED` and the ref unchanged.
import { MemoryDag } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from './helpers.js';

const SID = GOLDEN_SESSION.id;
const GOLDEN_MAIN = '2d6739e6531c79338d437bcd12e6a1911db229f3';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A synced golden session whose head placeholder (a6) is then filled: the next sync moves main by one commit. */
async function setup(lockTimeoutMs: number) {
  const dag = new MemoryDag();
  await writeGolden(dag);
  await dag.setHead(SID, 'a6');
  const root = tempDir('eg-held-');
  const mirror = createNodeMirror({ dag, root, lock: { timeoutMs: lockTimeoutMs, staleMs: 60_000 } });
  await mirror.sync(SID);
  await dag.fillNode(SID, 'a6', 'Filled.', null);
  const dir = join(root, SID);
  expect(git(dir, 'rev-parse', 'main').trim()).toBe(GOLDEN_MAIN);
  return { dag, mirror, dir };
}

/** The refs an undisturbed run ends with. */
async function reference(): Promise<string> {
  const { mirror, dir } = await setup(5000);
  await mirror.sync(SID);
  return git(dir, 'for-each-ref', '--format=%(refname) %(objectname)');
}

/** A native git holding `refs/heads/main.lock`: an `update-ref --stdin` transaction, prepared and left open. */
async function gitHoldsMain(dir: string): Promise<ChildProcessWithoutNullStreams> {
  const p = spawn('git', ['update-ref', '--stdin'], {
    cwd: dir,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir },
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('prepare: ok')) resolve();
    });
    p.once('exit', (code) => reject(new Error(`git update-ref --stdin exited ${code}: ${out}`)));
    p.stdin.write(`start\nupdate refs/heads/main ${GOLDEN_MAIN} ${GOLDEN_MAIN}\nprepare\n`);
  });
  return p;
}

async function gitReleases(p: ChildProcessWithoutNullStreams): Promise<void> {
  const exited = new Promise((r) => p.once('exit', r));
  p.stdin.end('abort\n');
  await exited;
}

/** `refs/heads/main.lock` taken by `holder`; the ref's and the lock's bytes then, and how to let go. */
async function holdMain(dir: string, holder: 'a lock file' | 'native git') {
  const lock = join(dir, '.git/refs/heads/main.lock');
  const mainBefore = readFileSync(join(dir, '.git/refs/heads/main'));
  let held: ChildProcessWithoutNullStreams | null = null;
  if (holder === 'native git') held = await gitHoldsMain(dir);
  else writeFileSync(lock, 'held by someone else\n');
  const release = async () => {
    if (held) await gitReleases(held);
    else unlinkSync(lock);
  };
  return { lock, mainBefore, lockBytes: readFileSync(lock), release };
}

describe('a <ref>.lock held by someone else while a sync runs', () => {
  for (const holder of ['a lock file', 'native git'] as const) {
    it(`${holder}: the sync waits without writing through, then lands with the undisturbed ids once it is released`, async () => {
      const expected = await reference();
      const { mirror, dir } = await setup(4000);
      const { lock, mainBefore, lockBytes, release } = await holdMain(dir, holder);

      let settled: 'no' | 'ok' | 'error' = 'no';
      const sync = mirror.sync(SID).then(
        (r) => ((settled = 'ok'), r),
        (err) => {
          settled = 'error';
          throw err;
        },
      );
      await sleep(700);
      // Waiting: not done, main not moved, the holder's lock untouched.
      expect(settled).toBe('no');
      expect(readFileSync(join(dir, '.git/refs/heads/main')).equals(mainBefore)).toBe(true);
      expect(readFileSync(lock).equals(lockBytes)).toBe(true);
      expect(git(dir, 'rev-parse', 'main').trim()).toBe(GOLDEN_MAIN);

      await release();
      const result = await sync;
      expect(result.commitsWritten).toBe(1);
      expect(git(dir, 'for-each-ref', '--format=%(refname) %(objectname)')).toBe(expected);
      expect(git(dir, 'rev-parse', 'main~1').trim()).toBe(GOLDEN_MAIN);
      expect(existsSync(lock)).toBe(false);
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(dir, 'status', '--porcelain')).toBe('');
      // main moved once, from the golden commit.
      expect(git(dir, 'reflog', 'show', '--format=%H', 'refs/heads/main').trim().split('\n')[1]).toBe(GOLDEN_MAIN);
      expect((await mirror.verify(SID)).ok).toBe(true);
    });

    it(`${holder}, never released: REF_LOCKED after the lock timeout, the ref unchanged, the lock left alone`, async () => {
      const expected = await reference();
      const { mirror, dir } = await setup(600);
      const { lock, mainBefore, lockBytes, release } = await holdMain(dir, holder);
      try {
        const started = Date.now();
        await expect(mirror.sync(SID)).rejects.toMatchObject({ code: 'REF_LOCKED' });
        expect(Date.now() - started).toBeGreaterThanOrEqual(600);
        expect(readFileSync(join(dir, '.git/refs/heads/main')).equals(mainBefore)).toBe(true);
        expect(readFileSync(lock).equals(lockBytes)).toBe(true);
        expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      } finally {
        await release();
      }
      // Released: the next sync finishes the turn with the undisturbed ids.
      await mirror.sync(SID);
      expect(git(dir, 'for-each-ref', '--format=%(refname) %(objectname)')).toBe(expected);
      expect(git(dir, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(dir, 'status', '--porcelain')).toBe('');
    });
  }
});
