// The snapshot's fast path (docs/design.md §7, "When a snapshot trusts the watcher"): after every
// kind of change — a shell child's edit, creates, deletes, renames of files and directories,
// ignored files, files over the size cap, edits while no watcher ran, another snapshot in between —
// the snapshot's tree is the tree `git add -A` gives with a fresh index, computed here by native
// git; and a wrapper around git records which snapshots ran no git process (the in-process path).
import { execFile } from 'node:child_process';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { closeShadowWatchers, ShadowRepository, SNAPSHOTS_REF } from '../../src/node/index.js';
import { freshTree as freshTreeOf } from './fresh-tree.js';
import { isolateGit, judge, loggingGit } from './judge.js';

const sh = promisify(execFile);
isolateGit();
afterAll(() => closeShadowWatchers());

const CAP = 1000;

const freshTree = (workdir: string) => freshTreeOf(workdir, CAP);

async function setup() {
  const workdir = await judge.tempDir();
  const root = join(await judge.tempDir(), 'shadow');
  const git = await loggingGit();
  await judge.write(join(workdir, '.gitignore'), 'build/\n*.log\n');
  for (let d = 0; d < 3; d++)
    for (let f = 0; f < 4; f++) await judge.write(join(workdir, 'src', `d${d}`, `f${f}.txt`), `d${d} f${f}\n`);
  const open = () => ShadowRepository.open({ root, workdir, maxFileBytes: CAP, gitPath: git.gitPath });
  let turn = 0;
  /** An after-snapshot; returns its tree and how it ran: `in-process` (no git at all), or status `full` or `scoped: <paths>`. */
  const snap = async () => {
    const repo = await open();
    await git.calls();
    const s = await repo.snapshot({ kind: 'after', sessionId: 'w', turn: ++turn });
    const calls = await git.calls();
    const status = calls.filter((c) => c.includes(' status '));
    const how =
      calls.length === 0
        ? 'in-process'
        : status.length === 0
          ? 'none'
          : status[0]!.includes(' -- ')
            ? `scoped: ${status[0]!.split(' -- ')[1]}`
            : 'full';
    const tree = (
      await judge.git(workdir, `--git-dir=${join(repo.dir, 'git')}`, 'rev-parse', `${s.commit}^{tree}`)
    ).trim();
    return { tree, how, snapshot: s, repo };
  };
  return { workdir, root, snap };
}

const inShell = (workdir: string, script: string) => sh('sh', ['-c', script], { cwd: workdir });

describe('shadow snapshots on the watcher', () => {
  it('give the tree a fresh-index `git add -A` gives, after every kind of change, and walk only when they must', async () => {
    const { workdir, snap } = await setup();
    const expectSame = async (how: string | RegExp) => {
      const got = await snap();
      expect(got.tree).toBe(await freshTree(workdir));
      if (typeof how === 'string') expect(got.how).toBe(how);
      else expect(got.how).toMatch(how);
      return got;
    };
    await expectSame('full'); // the first snapshot of the process walks

    // Nothing changed: no git process at all.
    const again = await snap();
    expect(again.how).toBe('in-process');

    await inShell(workdir, 'printf "by the shell\\n" >> src/d0/f1.txt');
    await expectSame('in-process');

    await inShell(
      workdir,
      'mkdir -p src/new/deep/er && printf "x\\n" > src/new/deep/er/a.txt && printf "y\\n" > src/d1/g.txt',
    );
    await expectSame('in-process');

    await inShell(workdir, 'rm src/d1/f0.txt src/new/deep/er/a.txt');
    await expectSame('in-process');

    await inShell(workdir, 'mv src/d1/f1.txt src/d1/moved.txt');
    await expectSame('in-process');

    // A directory renamed, then edited inside under its new name in the next turn.
    await inShell(workdir, 'mv src/d2 src/d2-renamed');
    await expectSame('in-process');
    await inShell(
      workdir,
      'printf "after the move\\n" > src/d2-renamed/f3.txt && mkdir src/d2-renamed/sub && printf "z\\n" > src/d2-renamed/sub/z.txt',
    );
    await expectSame('in-process');

    // Ignored files come and go without changing the snapshot; a nested .gitignore un-ignores one.
    await inShell(
      workdir,
      'mkdir -p build src/d0/keep && printf "out\\n" > build/out.js && printf "log\\n" > src/d0/run.log && printf "kept\\n" > src/d0/keep/x.log',
    );
    await expectSame('in-process');
    await inShell(workdir, 'printf "!x.log\\n" > src/d0/keep/.gitignore');
    await expectSame('in-process');

    // Over the size cap: left out, named; back under it: in.
    await fsp.writeFile(join(workdir, 'src', 'd0', 'big.bin'), Buffer.alloc(CAP + 1, 7));
    const big = await expectSame('in-process');
    expect(big.snapshot.overSizeCap).toEqual(['src/d0/big.bin']);
    await inShell(workdir, 'printf "edit elsewhere\\n" > src/d0/f2.txt');
    expect((await expectSame('in-process')).snapshot.overSizeCap).toEqual(['src/d0/big.bin']);
    await fsp.writeFile(join(workdir, 'src', 'd0', 'big.bin'), 'small now\n');
    expect((await expectSame('in-process')).snapshot.overSizeCap).toEqual([]);

    // The root .gitignore changed: only a walk can say what it un-ignores.
    await inShell(workdir, 'printf "build/\\n" > .gitignore');
    await expectSame('full');
    await inShell(workdir, 'printf "again\\n" > src/d0/run.log');
    await expectSame('in-process');
  }, 120_000);

  it('walk the whole tree after edits made while no watcher ran, and after another snapshot in between', async () => {
    const { workdir, root, snap } = await setup();
    await snap();
    expect((await snap()).how).toBe('in-process');
    closeShadowWatchers();
    await inShell(
      workdir,
      'printf "unwatched\\n" > src/d0/f0.txt && rm src/d1/f1.txt && mkdir src/late && printf "l\\n" > src/late/l.txt',
    );
    const after = await snap();
    expect(after.how).toBe('full');
    expect(after.tree).toBe(await freshTree(workdir));
    expect((await snap()).how).toBe('in-process');

    // The work tree moved away and made again under its name: a new directory no watch is on.
    await sh('sh', [
      '-c',
      `mv '${workdir}' '${workdir}.old' && cp -a '${workdir}.old' '${workdir}' && printf "new\\n" > '${workdir}/src/d0/f3.txt'`,
    ]);
    const replaced = await snap();
    expect(replaced.how).toBe('full');
    expect(replaced.tree).toBe(await freshTree(workdir));
    expect((await snap()).how).toBe('in-process');

    // Another snapshot (this process's without a watcher stands for another process's) moves the tip.
    const other = await ShadowRepository.open({ root, workdir, maxFileBytes: CAP, watch: false });
    await inShell(workdir, 'printf "other\\n" > src/d2/f2.txt');
    const theirs = await other.snapshot({ kind: 'after', sessionId: 'other', turn: 1 });
    const ours = await snap();
    expect(ours.how).toBe('full');
    expect(ours.tree).toBe(await freshTree(workdir));
    const tip = (
      await judge.git(workdir, `--git-dir=${join(ours.repo.dir, 'git')}`, 'rev-parse', SNAPSHOTS_REF)
    ).trim();
    expect(tip).toBe(ours.snapshot.commit);
    expect((await judge.git(workdir, `--git-dir=${join(ours.repo.dir, 'git')}`, 'rev-parse', `${tip}^`)).trim()).toBe(
      theirs.commit,
    );
    await judge.git(workdir, `--git-dir=${join(ours.repo.dir, 'git')}`, 'fsck', '--strict', '--no-progress');
  }, 120_000);
});
