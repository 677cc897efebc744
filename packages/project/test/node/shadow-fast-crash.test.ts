// The in-process snapshot killed before each of its writes (blobs, trees, the commit, the index
// mark, the ref's lock, the ref's move): native git finds the shadow repository sound, its tip is
// the old snapshot or the new one, and the next snapshot (a walk) gives the work tree's tree with
// the index caught up.
import { execFile } from 'node:child_process';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { builtChild } from '@entity-git/test-utils/node-child';
import { describe, expect, it } from 'vitest';
import { ShadowRepository, SNAPSHOTS_REF } from '../../src/node/index.js';
import { freshTree } from './fresh-tree.js';
import { isolateGit, judge } from './judge.js';

isolateGit();
const run = promisify(execFile);
const child = builtChild(join(import.meta.dirname, 'shadow-fast-crash-child.ts'));

const FILES = { 'a.txt': 'a0\n', 'b.txt': 'b0\n', 'd.sh': 'echo d\n', 'keep/k.txt': 'k\n' };

/** The work tree as the child leaves it, in a directory of its own: the tree a snapshot of it must hold. */
async function expectedTree(): Promise<string> {
  const dir = await judge.tempDir();
  for (const [name, text] of Object.entries(FILES)) if (name !== 'b.txt') await judge.write(join(dir, name), text);
  await judge.write(join(dir, 'a.txt'), 'a1\n');
  await judge.write(join(dir, 'sub', 'c.txt'), 'c1\n');
  await fsp.chmod(join(dir, 'd.sh'), 0o755);
  return freshTree(dir);
}

describe('the in-process shadow snapshot killed at every write', () => {
  it('leaves a sound repository at the old tip or the new one, and the next snapshot whole', {
    timeout: 900_000,
  }, async () => {
    const base = await judge.tempDir();
    const workdir = join(base, 'work');
    const root = join(base, 'shadow');
    const pristine = join(base, 'pristine');
    for (const [name, text] of Object.entries(FILES)) await judge.write(join(workdir, name), text);
    const setup = await ShadowRepository.open({ root, workdir, watch: false });
    const first = await setup.snapshot({ kind: 'before' });
    await fsp.mkdir(pristine);
    await run('cp', ['-a', workdir, root, pristine]);
    const gitDir = join(setup.dir, 'git');
    const shadow = (...args: string[]) => judge.git(workdir, `--git-dir=${gitDir}`, `--work-tree=${workdir}`, ...args);
    const expected = await expectedTree();

    let finished: { commit: string; writes: number } | null = null;
    let k = 1;
    for (; finished === null; k++) {
      await fsp.rm(workdir, { recursive: true, force: true });
      await fsp.rm(root, { recursive: true, force: true });
      await run('cp', ['-a', join(pristine, 'work'), join(pristine, 'shadow'), base]);
      const count = join(base, `count-${k}`);
      const done = await run(process.execPath, [child, root, workdir, count, String(k)]).then(
        (r) => JSON.parse(r.stdout) as { commit: string; writes: number },
        (err: { signal?: string }) => {
          expect(err.signal).toBe('SIGKILL');
          return null;
        },
      );
      await shadow('fsck', '--strict', '--no-progress');
      const tip = (await shadow('rev-parse', SNAPSHOTS_REF)).trim();
      if (done !== null) {
        finished = done;
        expect(tip).toBe(done.commit);
        // The in-process path took it: the index was left behind the tip.
        expect(await judge.exists(join(gitDir, '..', 'index-behind'))).toBe(true);
      } else if (tip !== first.commit) {
        expect((await shadow('rev-parse', `${tip}^{tree}`)).trim()).toBe(expected);
        expect((await shadow('rev-parse', `${tip}^`)).trim()).toBe(first.commit);
      }
      // The next snapshot, in this process (a walk), whatever the kill left.
      const next = await (await ShadowRepository.open({ root, workdir, watch: false })).snapshot({
        kind: 'after',
        sessionId: 's',
        turn: 2,
      });
      expect((await shadow('rev-parse', `${next.commit}^{tree}`)).trim()).toBe(expected);
      await shadow('fsck', '--strict', '--no-progress');
      expect(await shadow('diff', '--cached', '--name-only', SNAPSHOTS_REF)).toBe('');
      expect(await shadow('status', '--porcelain', '--untracked-files=all')).toBe('');
    }
    // Three blobs, their trees, the commit, the mark, the ref's lock and its move: every one a kill point.
    expect(finished.writes).toBeGreaterThanOrEqual(8);
    expect(k - 1).toBe(finished.writes + 1);
  });
});
