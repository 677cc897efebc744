// A restore killed after every git call it makes: the next call on the project finishes it, so the
// work tree is as it was or as restored, never half of each, no temporary file is left in the
// workdir, and native git finds the shadow repository sound.
import { execFile } from 'node:child_process';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ShadowProjectGit, ShadowRepository } from '../../src/node/index.js';
import { isolateGit, judge } from './judge.js';

isolateGit();
const run = promisify(execFile);
const tsx = join(process.cwd(), 'node_modules/.bin/tsx');
const child = join(import.meta.dirname, 'shadow-restore-child.ts');

const BEFORE = { 'a.txt': 'a0\n', 'b.txt': 'b0\n', 'c.txt': null, 'keep.txt': 'user\n' };
const AFTER = { 'a.txt': 'a1\n', 'b.txt': 'b1\n', 'c.txt': 'c1\n', 'keep.txt': 'user\n' };

async function state(workdir: string): Promise<Record<string, string | null>> {
  const out: Record<string, string | null> = {};
  for (const name of Object.keys(BEFORE)) out[name] = await fsp.readFile(join(workdir, name), 'utf8').catch(() => null);
  return out;
}

describe('shadow restore: a kill after every git call', () => {
  it('leaves the work tree as it was or as restored once the next call finishes it', { timeout: 600_000 }, async () => {
    const base = await judge.tempDir();
    const workdir = join(base, 'work');
    const root = join(base, 'shadow');
    const pristine = join(base, 'pristine');
    await fsp.mkdir(workdir);
    for (const [name, text] of Object.entries(BEFORE)) if (text !== null) await judge.write(join(workdir, name), text);
    const setupGit = new ShadowProjectGit({ root });
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
    const wrapper = join(base, 'git-wrapper.sh');
    await fsp.writeFile(
      wrapper,
      '#!/bin/sh\ngit "$@"; code=$?\nn=$(( $(cat "$EG_COUNT" 2>/dev/null || echo 0) + 1 ))\necho $n > "$EG_COUNT"\n[ "$n" = "$EG_CRASH_AT" ] && kill -9 $PPID\nexit $code\n',
      { mode: 0o755 },
    );
    const seen = new Set<string>();
    for (let k = 1; ; k++) {
      await fsp.rm(workdir, { recursive: true, force: true });
      await fsp.rm(root, { recursive: true, force: true });
      await run('cp', ['-a', join(pristine, 'work'), join(pristine, 'shadow'), base]);
      const count = join(base, `count-${k}`);
      const finished = await run(tsx, ['--conditions=source', child, root, workdir, wrapper], {
        env: { ...process.env, EG_CRASH_AT: String(k), EG_COUNT: count },
      }).then(
        () => true,
        (err: { signal?: string; code?: number; stderr?: string }) => {
          // tsx runs the script in a child of its own and reports that child's SIGKILL as exit 137.
          expect(err.signal === 'SIGKILL' || err.code === 137, `${err.code} ${err.signal} ${err.stderr}`).toBe(true);
          return false;
        },
      );
      // The next call on the project finishes an interrupted restore first.
      await new ShadowProjectGit({ root }).listTurnFiles({ workdir, sessionId: 's1', turn: 1 });
      const now = await state(workdir);
      const which =
        JSON.stringify(now) === JSON.stringify(BEFORE)
          ? 'restored'
          : JSON.stringify(now) === JSON.stringify(AFTER)
            ? 'as-it-was'
            : 'mixed';
      expect(which, `killed after git call ${k}: ${JSON.stringify(now)}`).not.toBe('mixed');
      seen.add(which);
      expect((await fsp.readdir(workdir)).filter((n) => n.includes('entity-git'))).toEqual([]);
      const repo = await ShadowRepository.open({ root, workdir });
      await judge.git(workdir, `--git-dir=${join(repo.dir, 'git')}`, 'fsck', '--strict', '--no-progress');
      if (finished) break;
    }
    expect([...seen].sort()).toEqual(['as-it-was', 'restored']);
  });
});
