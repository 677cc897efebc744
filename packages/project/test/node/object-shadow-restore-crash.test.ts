// An object-engine restore killed after every write it makes through its storage: the next call on
// the project finishes it, so the work tree is as it was or as restored, never half of each, no
// temporary file is left in the workdir, and native git finds the shadow repository sound. A
// lock file the killed process left is a dead writer's: the test's lock options call one stale
// after 100 ms (the default is LOCK_DEFAULTS.ref's 30 s).
import { execFile, spawn } from 'node:child_process';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { nodeCodec, nodeStorage } from '@entity-git/node-fs';
import { builtChild } from '@entity-git/test-utils/node-child';
import { describe, expect, it } from 'vitest';
import { ObjectShadowProjectGit, ObjectShadowRepository } from '../../src/index.js';
import { isolateGit, judge } from './judge.js';

isolateGit();
const run = promisify(execFile);
const child = builtChild(join(import.meta.dirname, 'object-shadow-restore-child.ts'));
const storage = nodeStorage();
const lock = { timeoutMs: 2000, staleMs: 100 };

const BEFORE = { 'a.txt': 'a0\n', 'b.txt': 'b0\n', 'c.txt': null, 'keep.txt': 'user\n' };
const AFTER = { 'a.txt': 'a1\n', 'b.txt': 'b1\n', 'c.txt': 'c1\n', 'keep.txt': 'user\n' };

async function state(workdir: string): Promise<Record<string, string | null>> {
  const out: Record<string, string | null> = {};
  for (const name of Object.keys(BEFORE)) out[name] = await fsp.readFile(join(workdir, name), 'utf8').catch(() => null);
  return out;
}

/** Runs the child restore, killed after its `crashAt`-th write; resolves whether it ran to the end. */
function restoreIn(root: string, workdir: string, crashAt: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [child, root, workdir], {
      env: { ...process.env, EG_CRASH_AT: String(crashAt) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.once('error', reject);
    p.once('exit', (code, signal) => {
      if (signal === 'SIGKILL' || code === 137) resolve(false);
      else if (code === 0) resolve(true);
      else reject(new Error(`child exited ${code}: ${stderr}`));
    });
  });
}

describe('object-engine shadow restore: a kill after every write', () => {
  it('leaves the work tree as it was or as restored once the next call finishes it', { timeout: 900_000 }, async () => {
    const base = await judge.tempDir();
    const workdir = join(base, 'work');
    const root = join(base, 'shadow');
    const pristine = join(base, 'pristine');
    await fsp.mkdir(workdir);
    for (const [name, text] of Object.entries(BEFORE)) if (text !== null) await judge.write(join(workdir, name), text);
    const setupGit = new ObjectShadowProjectGit({ storage, codec: nodeCodec, root, lock });
    const snapshot = await setupGit.beforeTurn(workdir);
    for (const [name, text] of Object.entries(AFTER)) await judge.write(join(workdir, name), text as string);
    await setupGit.afterTurn({
      workdir,
      sessionId: 's1',
      turn: 1,
      userMessage: '',
      model: 'm',
      touchedPaths: ['a.txt'],
      snapshot,
    });
    await fsp.mkdir(pristine);
    await run('cp', ['-a', workdir, root, pristine]);
    const seen = new Set<string>();
    for (let k = 1; ; k++) {
      await fsp.rm(workdir, { recursive: true, force: true });
      await fsp.rm(root, { recursive: true, force: true });
      await run('cp', ['-a', join(pristine, 'work'), join(pristine, 'shadow'), base]);
      const finished = await restoreIn(root, workdir, k);
      // Past the stale age of a lock the killed process left: it is taken over, as a dead writer's.
      await sleep(150);
      // The next call on the project finishes an interrupted restore first.
      await new ObjectShadowProjectGit({ storage, codec: nodeCodec, root, lock }).listTurnFiles({
        workdir,
        sessionId: 's1',
        turn: 1,
      });
      const now = await state(workdir);
      const which =
        JSON.stringify(now) === JSON.stringify(BEFORE)
          ? 'restored'
          : JSON.stringify(now) === JSON.stringify(AFTER)
            ? 'as-it-was'
            : 'mixed';
      expect(which, `killed after write ${k}: ${JSON.stringify(now)}`).not.toBe('mixed');
      seen.add(which);
      expect((await fsp.readdir(workdir)).filter((n) => n.includes('entity-git'))).toEqual([]);
      const repo = await ObjectShadowRepository.open({ storage, root, workdir });
      await judge.git(workdir, `--git-dir=${join(repo.dir, 'git')}`, 'fsck', '--strict', '--no-progress');
      if (finished) break;
    }
    expect([...seen].sort()).toEqual(['as-it-was', 'restored']);
  });
});
