// The snapshot the watcher vouches for, written in-process (docs/design.md §7, "When a snapshot
// trusts the watcher"): after every kind of change its tree id is the one a shadow repository that
// walks the whole tree with git every time gives on the same work tree, and it runs no git process;
// the index it leaves behind is caught up by the next walk, which gives the same tree, with native
// git finding the repository sound and its status clean.
import { execFile } from 'node:child_process';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { closeShadowWatchers, ShadowRepository, SNAPSHOTS_REF } from '../../src/node/index.js';
import { isolateGit, judge, loggingGit } from './judge.js';

const sh = promisify(execFile);
isolateGit();
afterAll(() => closeShadowWatchers());

const CAP = 1000;

const inShell = (workdir: string, script: string) => sh('sh', ['-c', script], { cwd: workdir });
const shadowGit = (repo: ShadowRepository, ...args: string[]) =>
  judge.git(repo.workdir, `--git-dir=${join(repo.dir, 'git')}`, `--work-tree=${repo.workdir}`, ...args);
const treeOf = async (repo: ShadowRepository, commit: string) =>
  (await shadowGit(repo, 'rev-parse', `${commit}^{tree}`)).trim();

/** Two shadow repositories of one work tree: one on the watcher, one walking with git every time. */
async function pair() {
  const workdir = await judge.tempDir();
  const base = await judge.tempDir();
  const git = await loggingGit();
  await judge.write(join(workdir, '.gitignore'), 'build/\n*.log\n');
  for (let d = 0; d < 3; d++)
    for (let f = 0; f < 4; f++) await judge.write(join(workdir, 'src', `d${d}`, `f${f}.txt`), `d${d} f${f}\n`);
  await judge.write(join(workdir, 'src', 'd0', 'tracked.txt'), 'tracked, later ignored\n');
  const fast = await ShadowRepository.open({
    root: join(base, 'fast'),
    workdir,
    maxFileBytes: CAP,
    gitPath: git.gitPath,
  });
  const walk = await ShadowRepository.open({ root: join(base, 'walk'), workdir, maxFileBytes: CAP, watch: false });
  let turn = 0;
  /** Both take an after-snapshot; the fast one's result, whether it ran git, and the walk's tree. */
  const snap = async () => {
    turn++;
    await git.calls();
    const got = await fast.snapshot({ kind: 'after', sessionId: 'f', turn });
    const calls = await git.calls();
    const walked = await walk.snapshot({ kind: 'after', sessionId: 'w', turn });
    return {
      got,
      tree: await treeOf(fast, got.commit),
      walkTree: await treeOf(walk, walked.commit),
      walkOverSizeCap: walked.overSizeCap,
      gitCalls: calls.length,
    };
  };
  return { workdir, fast, walk, snap };
}

describe('the in-process shadow snapshot', () => {
  it('gives the tree a full walk gives on the same work tree, after every kind of change, with no git process', async () => {
    const { workdir, fast, snap } = await pair();
    const first = await snap(); // the first snapshot of the process walks
    expect(first.gitCalls).toBeGreaterThan(0);
    expect(first.tree).toBe(first.walkTree);
    const same = async (script: string | (() => Promise<unknown>), expectGit = false) => {
      if (typeof script === 'string') await inShell(workdir, script);
      else await script();
      const r = await snap();
      expect(r.tree).toBe(r.walkTree);
      expect(r.got.overSizeCap).toEqual(r.walkOverSizeCap);
      if (expectGit) expect(r.gitCalls).toBeGreaterThan(0);
      else expect(r.gitCalls).toBe(0);
      return r;
    };
    await same('printf "edited\\n" >> src/d0/f1.txt');
    // A new ignore file where the fast path already knows the directory: what it knew is dropped.
    await same('printf "n\\n" > src/d0/fresh.txt && printf "fresh.txt\\n" > src/d0/.gitignore');
    await same('mkdir -p src/new/deep/er && printf "x\\n" > src/new/deep/er/a.txt && printf "y\\n" > src/d1/g.txt');
    await same('rm src/d1/f0.txt src/new/deep/er/a.txt');
    await same('mv src/d1/f1.txt src/d1/moved.txt && mv src/d2 src/d2-renamed');
    await same('rm -r src/d2-renamed');
    // Ignored files come and go; a nested .gitignore un-ignores one, then ignores a tracked file (it stays).
    await same('mkdir -p build src/d0/keep && printf "o\\n" > build/out.js && printf "l\\n" > src/d0/run.log');
    await same('printf "k\\n" > src/d0/keep/x.log && printf "!x.log\\n" > src/d0/keep/.gitignore');
    await same('printf "tracked.txt\\nf2.txt\\n" > src/d0/.gitignore && printf "edit\\n" >> src/d0/tracked.txt');
    await same('printf "new, ignored\\n" > src/d0/other.txt && printf "!other.txt\\n" >> src/d0/.gitignore');
    // A file the fast path added, then ignored by a nested .gitignore: tracked, so kept, as git keeps it.
    await same('printf "added\\n" > src/d1/late.txt');
    await same('printf "late.txt\\n" > src/d1/.gitignore && printf "more\\n" >> src/d1/late.txt');
    // Over the size cap, ignored or not; a tracked ignored file grows over it; and back under.
    const big = await same(async () => {
      await fsp.writeFile(join(workdir, 'src', 'd1', 'big.bin'), Buffer.alloc(CAP + 1, 7));
      await fsp.writeFile(join(workdir, 'build', 'big.bin'), Buffer.alloc(CAP + 1, 7));
      await fsp.writeFile(join(workdir, 'src', 'd0', 'tracked.txt'), Buffer.alloc(CAP + 5, 1));
    });
    expect(big.got.overSizeCap).toEqual(['src/d0/tracked.txt', 'src/d1/big.bin']);
    expect((await same('printf "elsewhere\\n" > src/d0/f3.txt')).got.overSizeCap).toEqual(['src/d1/big.bin']);
    expect((await same('printf "small\\n" > src/d1/big.bin')).got.overSizeCap).toEqual([]);
    // A file becomes a directory, and a directory a file.
    await same('rm src/d0/f0.txt && mkdir -p src/d0/f0.txt/inner && printf "in\\n" > src/d0/f0.txt/inner/i.txt');
    await same('rm -r src/new && printf "now a file\\n" > src/new');
    // Symbolic links: to a file, to a directory, dangling; one replaced by a file.
    await same('ln -s f1.txt src/d0/link && ln -s ../d1 src/d0/dirlink && ln -s nowhere src/d0/dangling');
    await same('rm src/d0/link && printf "was a link\\n" > src/d0/link && ln -sf elsewhere src/d0/dangling');
    // Executable bits: the owner's bit is what git records.
    await same('chmod +x src/d0/f1.txt && printf "#!/bin/sh\\n" > src/d1/run.sh && chmod 755 src/d1/run.sh');
    await same('chmod -x src/d0/f1.txt && chmod 654 src/d0/f3.txt');
    // Names git keeps as they are.
    const named = await same('printf "s\\n" > "src/d1/with space.txt" && printf "u\\n" > "src/d1/ünï.txt"');
    // Nothing changed: an after-snapshot still commits, on the tip's tree, with no git process.
    const idle = await same(async () => undefined);
    expect(idle.got.commit).toBe((await shadowGit(fast, 'rev-parse', SNAPSHOTS_REF)).trim());
    expect(idle.got.commit).not.toBe(named.got.commit);
    expect(idle.tree).toBe(named.tree);
    // A nested repository is git's to judge: the snapshot asks it, and still gives the walk's tree.
    const nested = await same(
      'mkdir -p src/vendored && git init -q src/vendored && printf "v\\n" > src/vendored/v.txt',
      true,
    );
    expect(await shadowGit(fast, 'ls-tree', '-r', '--name-only', nested.got.commit, '--', 'src/vendored')).toBe('');
    await same('printf "after the nested repository\\n" > src/d1/g.txt');
    await shadowGit(fast, 'fsck', '--strict', '--no-progress');
  }, 300_000);

  it('leaves the index behind the tip, and the next walk catches it up to the same tree, fsck and status clean', async () => {
    const { workdir, fast, snap } = await pair();
    await snap();
    await inShell(
      workdir,
      'printf "a\\n" > src/d0/f0.txt && rm src/d1/f1.txt && mkdir src/n && printf "n\\n" > src/n/n.txt',
    );
    const one = await snap();
    await fsp.writeFile(join(workdir, 'src', 'd2', 'big.bin'), Buffer.alloc(CAP + 1, 3));
    await inShell(workdir, 'printf "b\\n" > src/d2/f2.txt');
    const two = await snap();
    expect(one.gitCalls + two.gitCalls).toBe(0);
    // The index still holds the walk's tree: it differs from the tip by exactly the fast path's paths.
    const lagging = (await shadowGit(fast, 'diff', '--cached', '--name-only', '-z', SNAPSHOTS_REF))
      .split('\0')
      .filter(Boolean);
    expect(lagging.sort()).toEqual(['src/d0/f0.txt', 'src/d1/f1.txt', 'src/d2/f2.txt', 'src/n/n.txt']);
    expect(await judge.exists(join(fast.dir, 'index-behind'))).toBe(true);

    // A walk (no watcher in this process any more) of the unchanged work tree.
    closeShadowWatchers();
    const walked = await fast.snapshot({ kind: 'after', sessionId: 'f', turn: 99 });
    expect(await treeOf(fast, walked.commit)).toBe(two.tree);
    expect(walked.overSizeCap).toEqual(['src/d2/big.bin']);
    expect(await judge.exists(join(fast.dir, 'index-behind'))).toBe(false);
    expect(await shadowGit(fast, 'diff', '--cached', '--name-only', SNAPSHOTS_REF)).toBe('');
    await shadowGit(fast, 'fsck', '--strict', '--no-progress');
    // The shadow's own status: nothing staged, nothing modified, only the file over the cap untracked.
    expect(await shadowGit(fast, 'status', '--porcelain', '--untracked-files=all')).toBe('?? src/d2/big.bin\n');
    // A before-snapshot right after reuses the tip: the index, the tip and the work tree are one.
    expect((await fast.snapshot({ kind: 'before' })).commit).toBe(walked.commit);
  }, 120_000);
});
