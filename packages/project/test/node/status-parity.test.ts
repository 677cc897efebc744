import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { createIsoGitEngine, type ChangedPath, type ProjectGitEngine, type RepoState } from '@entity-git/project';
import { nativeGitEngine } from '@entity-git/project/node';
import { nodeStorage } from '@entity-git/node-fs';
import { afterAll, describe, expect, it } from 'vitest';
import { isolateGit, judge } from './judge.js';

isolateGit();
const native = nativeGitEngine();
const iso = createIsoGitEngine({ storage: nodeStorage() });

/** A small deterministic PRNG, so a failing seed can be replayed. */
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

const IGNORE = [
  '*.log',
  '!important.log',
  '/build',
  'docs/**/*.tmp',
  '**/cache/',
  'a?c.txt',
  '[xy]z.txt',
  'vendor/*',
  '!vendor/keep.txt',
  '\\#hash.txt',
  '\\!bang.txt',
  'trailing.txt   ',
  'deep/**',
  'out/',
  '*.o',
];
const NAMES = [
  'a.txt',
  'abc.txt',
  'xz.txt',
  'zz.txt',
  'x.log',
  'important.log',
  '#hash.txt',
  '!bang.txt',
  'trailing.txt',
  'f.o',
  'f.c',
  'notes.md',
  'z.tmp',
];
const DIRS = [
  '',
  'src',
  'src/lib',
  'docs',
  'docs/api/v1',
  'build',
  'cache',
  'src/cache',
  'vendor',
  'deep/er',
  'out',
  'tools/out',
];

async function state(engine: ProjectGitEngine, dir: string): Promise<{ repo: RepoState; changes: ChangedPath[] }> {
  const s = await engine.inspect(dir);
  if (s.kind !== 'repository') throw new Error(`not a repository: ${s.kind}`);
  return { repo: s.repo, changes: await engine.status(s.repo) };
}

const summary = (changes: ChangedPath[]) =>
  changes.map(
    (c) =>
      `${c.path} ${c.untracked ? '?' : ''}${c.staged ? 'S' : ''}${c.unstaged ? 'U' : ''}${c.conflicted ? 'C' : ''}${c.submodule ? 'M' : ''}`,
  );

async function scenario(seed: number): Promise<string> {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const dir = await judge.tempDir();
  await judge.git(dir, 'init', '-q', '-b', 'main');
  await judge.write(`${dir}/.gitignore`, `${IGNORE.filter(() => r() < 0.7).join('\n')}\n`);
  if (r() < 0.5) await judge.write(`${dir}/src/.gitignore`, '*.c\n!keep.c\n');
  if (r() < 0.5) await judge.write(`${dir}/.git/info/exclude`, 'notes.md\n');
  for (let i = 0; i < 40; i++)
    await judge.write(join(dir, pick(DIRS), pick(NAMES)), `v${i} ${'x'.repeat(Math.floor(r() * 20))}\n`);
  await judge.git(dir, 'add', '-A', '-f');
  await judge.git(dir, 'commit', '-q', '-m', 'base');
  if (r() < 0.3) await judge.git(dir, 'update-index', '--index-version', '4');
  const tracked = (await judge.git(dir, 'ls-files', '-z')).split('\0').filter(Boolean);
  // A mutation that no longer applies (its file became a directory meanwhile) is simply skipped.
  for (let i = 0; i < 25; i++) await mutate(i).catch(() => undefined);
  async function mutate(i: number) {
    const op = r();
    const t = pick(tracked);
    const full = join(dir, t);
    if (op < 0.2) await judge.write(full, `changed ${i}\n`);
    else if (op < 0.3) await judge.remove(full);
    else if (op < 0.4) {
      await judge.write(full, `staged ${i}\n`);
      await judge.git(dir, 'add', '-f', '--', t);
      if (r() < 0.5) await judge.write(full, `then changed ${i}\n`);
    } else if (op < 0.45) await fsp.chmod(full, 0o755).catch(() => undefined);
    else if (op < 0.5) await judge.git(dir, 'rm', '-q', '--cached', '--', t).catch(() => undefined);
    else if (op < 0.55) {
      const p = join(pick(DIRS), `new-${i}.txt`);
      await judge.write(join(dir, p), 'intent\n');
      await judge.git(dir, 'add', '-f', '-N', '--', p);
    } else if (op < 0.6) {
      // A file turned into a directory, or into a symlink.
      await judge.remove(full);
      if (r() < 0.5) await judge.write(join(full, 'inside.txt'), 'was a file\n');
      else await judge.symlink(r() < 0.5 ? 'a.txt' : '../nowhere', full);
    } else if (op < 0.63) await judge.symlink('src', join(dir, `link-${i}`));
    else await judge.write(join(dir, pick(DIRS), r() < 0.5 ? pick(NAMES) : `fresh-${i}.txt`), `new ${i}\n`);
  }
  if (r() < 0.3)
    await judge.write(`${dir}/nested/inner/.git/HEAD`, 'ref: refs/heads/main\n').then(async () => {
      await fsp.mkdir(`${dir}/nested/inner/.git/objects`, { recursive: true });
      await fsp.mkdir(`${dir}/nested/inner/.git/refs`, { recursive: true });
      await judge.write(`${dir}/nested/inner/file.txt`, 'inside a nested repository\n');
    });
  return dir;
}

describe('the isomorphic-git engine sees what native git sees', () => {
  for (let seed = 1; seed <= 40; seed++) {
    it(`status, seed ${seed}`, async () => {
      const dir = await scenario(seed);
      const index = await judge.fingerprint(`${dir}/.git/index`);
      const [n, i] = await Promise.all([state(native, dir), state(iso, dir)]);
      expect(summary(i.changes)).toEqual(summary(n.changes));
      expect(i.repo).toEqual(n.repo);
      // Neither engine wrote the index while looking.
      expect(await judge.fingerprint(`${dir}/.git/index`)).toBe(index);
      const paths = n.changes.map((c) => c.path);
      expect(await iso.hashPaths(i.repo, paths)).toEqual(await native.hashPaths(n.repo, paths));
    });
  }
});

describe('the isomorphic-git engine commits what native git commits', () => {
  const who = { name: 'agent (m via OpenProgram)', email: 'agent@openprogram.invalid', time: 1_700_000_500 };
  let landed = 0;
  afterAll(() => {
    // The scenarios must really exercise commits, not mostly fall through the early returns.
    expect(landed).toBeGreaterThanOrEqual(16);
  });
  for (let seed = 1; seed <= 24; seed++) {
    it(`commit, seed ${seed}`, async () => {
      const a = await scenario(seed);
      const b = `${a}-copy`;
      await fsp.cp(a, b, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
      const [n, i] = await Promise.all([state(native, a), state(iso, b)]);
      const r = rng(seed * 7919);
      const paths = n.changes
        .filter((c) => !c.conflicted && !c.submodule && !c.path.startsWith('nested') && r() < 0.6)
        .map((c) => c.path);
      if (paths.length === 0) return;
      const request = {
        paths,
        message: `agent commit ${seed}\n`,
        author: who,
        committer: who,
        reflogMessage: `commit: agent commit ${seed}`,
      };
      const [dn, di] = [await native.commit(n.repo, request), await iso.commit(i.repo, request)];
      expect(di?.commit).toBe(dn?.commit);
      expect(di?.entries).toEqual(dn?.entries);
      if (dn === null) return;
      landed++;
      expect(await judge.git(b, 'ls-files', '-s')).toBe(await judge.git(a, 'ls-files', '-s'));
      expect(await judge.git(b, 'status', '--porcelain=v2', '--untracked-files=all')).toBe(
        await judge.git(a, 'status', '--porcelain=v2', '--untracked-files=all'),
      );
      expect(await judge.git(b, 'fsck', '--strict', '--no-dangling')).toBe('');
      expect((await judge.git(b, 'reflog', '-1', '--format=%H %gs', 'main')).trim()).toBe(
        `${dn.commit} commit: agent commit ${seed}`,
      );
    });
  }
});
