import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { portableCodec } from '@entity-git/git';
import { describe, expect, it } from 'vitest';
import { parseGitConfig, configBool, configValue } from '@entity-git/git';
import { isIgnored, parseIgnore, type IgnoreStack } from '@entity-git/git';
import { isAbsolute, joinRelative, normalizeAbsolute, toRepoPath, within } from '../src/paths.js';
import { readWorkIndex, unsupportedIndex, writeWorkIndex } from '@entity-git/git';

const env = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'u',
  GIT_AUTHOR_EMAIL: 'u@x',
  GIT_COMMITTER_NAME: 'u',
  GIT_COMMITTER_EMAIL: 'u@x',
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
const gitIn = (cwd: string, input: string, ...args: string[]) => {
  try {
    return execFileSync('git', args, { cwd, env, input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (err) {
    return (err as { stdout: string }).stdout;
  }
};
const write = (p: string, data: string) => {
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, data);
};
const repo = () => {
  const dir = mkdtempSync(join(tmpdir(), 'eg-formats-'));
  git(dir, 'init', '-q', '-b', 'main');
  return dir;
};

describe('gitignore matching agrees with git check-ignore', () => {
  const root = [
    '# a comment',
    '',
    '*.log',
    '!keep.log',
    '/root-only.txt',
    'build/',
    'docs/**/*.tmp',
    '**/cache',
    'a?c',
    '[xy]z',
    '[!q]w',
    'vendor/*',
    '!vendor/ok',
    '\\#literal',
    '\\!bang',
    'spaces   ',
    'esc\\ ',
    'deep/**',
    'mid/**/end',
    '*.[oa]',
    'name/',
    'x/y',
    '[[:digit:]]d',
  ].join('\n');
  const sub = ['*.c', '!main.c', '/local', 'nested/'].join('\n');
  const paths: Array<[string, boolean]> = [
    ['a.log', false],
    ['keep.log', false],
    ['src/x.log', false],
    ['root-only.txt', false],
    ['src/root-only.txt', false],
    ['build', true],
    ['build', false],
    ['src/build', true],
    ['docs/a.tmp', false],
    ['docs/x/y/a.tmp', false],
    ['cache', true],
    ['src/cache', true],
    ['src/cache', false],
    ['abc', false],
    ['xz', false],
    ['yz', false],
    ['zz', false],
    ['pw', false],
    ['qw', false],
    ['vendor/lib', false],
    ['vendor/ok', false],
    ['#literal', false],
    ['!bang', false],
    ['spaces', false],
    ['spaces   ', false],
    ['esc ', false],
    ['esc', false],
    ['deep/a/b', false],
    ['deep', true],
    ['mid/end', false],
    ['mid/a/b/end', false],
    ['x.o', false],
    ['x.a', false],
    ['x.b', false],
    ['name', true],
    ['name', false],
    ['x/y', false],
    ['q/x/y', false],
    ['3d', false],
    ['sub/a.c', false],
    ['sub/main.c', false],
    ['sub/local', false],
    ['sub/deeper/local', false],
    ['sub/nested', true],
    ['sub/nested', false],
    ['sub/x.log', false],
  ];
  it('for every pattern form gitignore(5) documents', () => {
    const stack: IgnoreStack = [
      { dir: '', rules: parseIgnore(root) },
      { dir: 'sub', rules: parseIgnore(sub) },
    ];
    // Real entries on disk, so git knows a directory from a file (one repository for each kind).
    for (const asDir of [true, false]) {
      const dir = repo();
      write(join(dir, '.gitignore'), root);
      write(join(dir, 'sub/.gitignore'), sub);
      const cases = paths.filter(([, d]) => d === asDir);
      for (const [p] of cases) {
        if (asDir) mkdirSync(join(dir, p), { recursive: true });
        else write(join(dir, p), 'x\n');
      }
      const ignored = new Set(
        gitIn(dir, `${cases.map(([p]) => p).join('\0')}\0`, 'check-ignore', '-z', '--stdin')
          .split('\0')
          .filter(Boolean),
      );
      for (const [p] of cases) expect([p, asDir, isIgnored(stack, p, asDir)]).toEqual([p, asDir, ignored.has(p)]);
    }
  });
});

describe('the user’s index, read and written without loss', () => {
  const fill = (dir: string) => {
    for (const p of ['a.txt', 'dir/b.txt', 'dir/sub/c.txt', 'dir/sub/d.txt', 'zeta/e.txt', 'ünï/ö.txt'])
      write(join(dir, p), `${p}\n`);
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'x');
  };
  const lsFiles = (dir: string) => git(dir, 'ls-files', '-s', '--debug');

  for (const version of [2, 3, 4]) {
    it(`version ${version}: every field as git reads it, and git reads our rewrite the same`, () => {
      const dir = repo();
      fill(dir);
      write(join(dir, 'new.txt'), 'n\n');
      git(dir, 'add', '-N', 'new.txt');
      git(dir, 'update-index', '--skip-worktree', 'zeta/e.txt');
      git(dir, 'update-index', '--index-version', String(version));
      const bytes = readFileSync(join(dir, '.git/index'));
      const index = readWorkIndex(bytes, portableCodec);
      expect(index.version).toBe(version === 2 ? 3 : version);
      expect(index.entries.map((e) => e.path)).toEqual(git(dir, 'ls-files', '-z').split('\0').filter(Boolean));
      expect(index.entries.find((e) => e.path === 'new.txt')).toMatchObject({ intentToAdd: true });
      expect(index.entries.find((e) => e.path === 'zeta/e.txt')).toMatchObject({ skipWorktree: true });
      expect(unsupportedIndex(index)).toBeNull();
      const before = lsFiles(dir);
      writeFileSync(join(dir, '.git/index'), writeWorkIndex(index, portableCodec));
      expect(lsFiles(dir)).toBe(before);
      expect(git(dir, 'status', '--porcelain')).toBe(' A new.txt\n');
    });
  }

  it('conflict stages and resolve-undo survive a rewrite; cache extensions are dropped for git to rebuild', () => {
    const dir = repo();
    write(join(dir, 'x.txt'), 'base\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'base');
    git(dir, 'checkout', '-q', '-b', 'o');
    write(join(dir, 'x.txt'), 'o\n');
    git(dir, 'commit', '-q', '-am', 'o');
    git(dir, 'checkout', '-q', 'main');
    write(join(dir, 'x.txt'), 'm\n');
    git(dir, 'commit', '-q', '-am', 'm');
    try {
      git(dir, 'merge', 'o');
    } catch {
      // the conflict is the point
    }
    const index = readWorkIndex(readFileSync(join(dir, '.git/index')), portableCodec);
    expect(index.entries.filter((e) => e.path === 'x.txt').map((e) => e.stage)).toEqual([1, 2, 3]);
    const before = lsFiles(dir);
    writeFileSync(join(dir, '.git/index'), writeWorkIndex(index, portableCodec));
    expect(lsFiles(dir)).toBe(before);
    git(dir, 'add', 'x.txt');
    const resolved = readWorkIndex(readFileSync(join(dir, '.git/index')), portableCodec);
    expect(resolved.extensions.map((x) => x.signature)).toContain('REUC');
    const again = writeWorkIndex(resolved, portableCodec);
    expect(readWorkIndex(again, portableCodec).extensions.map((x) => x.signature)).toEqual(
      resolved.extensions.map((x) => x.signature).filter((s) => !['TREE', 'UNTR', 'FSMN', 'EOIE', 'IEOT'].includes(s)),
    );
    writeFileSync(join(dir, '.git/index'), again);
    expect(git(dir, 'ls-files', '--resolve-undo')).toContain('x.txt');
  });

  it('reports a split index and refuses a corrupt one', () => {
    const dir = repo();
    fill(dir);
    git(dir, 'update-index', '--split-index');
    const index = readWorkIndex(readFileSync(join(dir, '.git/index')), portableCodec);
    expect(unsupportedIndex(index)).toMatch(/split index/);
    const bytes = readFileSync(join(dir, '.git/index'));
    bytes[40] = bytes[40]! ^ 1;
    expect(() => readWorkIndex(bytes, portableCodec)).toThrow(expect.objectContaining({ code: 'REPO_CORRUPT' }));
  });
});

describe('git config, as far as the engine reads it', () => {
  it('sections, subsections, quoting, escapes, continuations and booleans', () => {
    const c = parseGitConfig(
      '[core]\n\tbare = false\n\tFileMode = no ; comment\n[Extensions]\n\tobjectFormat = "sha256"\n[remote "Origin"]\n\turl = "a \\"b\\" c" # x\n[x]\n\tflag\n\tempty =\n\tlong = one \\\n two\n',
    );
    expect(configBool(c, 'core.bare', true)).toBe(false);
    expect(configBool(c, 'core.filemode', true)).toBe(false);
    expect(configValue(c, 'extensions.objectformat')).toBe('sha256');
    expect(configValue(c, 'remote.Origin.url')).toBe('a "b" c');
    expect(configBool(c, 'x.flag', false)).toBe(true);
    expect(configBool(c, 'x.empty', true)).toBe(false);
    expect(configValue(c, 'x.long')).toBe('one  two');
  });
});

describe('paths the agent reports', () => {
  it('normalizes workdirs and maps touched paths into the repository, refusing what is outside', () => {
    expect(normalizeAbsolute('/a/./b/../c/')).toBe('/a/c');
    expect(normalizeAbsolute('C:\\proj\\x\\')).toBe('C:/proj/x');
    expect(isAbsolute('relative')).toBe(false);
    expect(joinRelative('a', '../../x')).toBeNull();
    expect(joinRelative('', 'a/./b//c')).toBe('a/b/c');
    expect(toRepoPath('x.txt', '/r/sub', '/real/r', 'sub')).toBe('sub/x.txt');
    expect(toRepoPath('/r/sub/y/z', '/r/sub', '/real/r', 'sub')).toBe('sub/y/z');
    expect(toRepoPath('/real/r/top.txt', '/r/sub', '/real/r', 'sub')).toBe('top.txt');
    expect(toRepoPath('/r/subway/x', '/r/sub', '/real/r', 'sub')).toBeNull();
    expect(toRepoPath('/r/sub', '/r/sub', '/real/r', '')).toBeNull();
    expect(toRepoPath('a\0b', '/r', '/r', '')).toBeNull();
    expect(toRepoPath('', '/r', '/r', '')).toBeNull();
    expect(within('a/b', 'a')).toBe(true);
    expect(within('ab', 'a')).toBe(false);
  });
});
