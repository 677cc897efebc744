// The project auto-commit's locks and pending journals live in a private directory of the user's:
// not a predictable folder in the shared temp directory, created 0700 with 0600 files whatever the
// umask, and refused (UNSAFE_DIRECTORY) when another user owns it or others may write in it.
import { chmodSync, chownSync, mkdirSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultStateDir, ensurePrivateDir, workdirJournal, workdirLock } from '@entity-git/project/node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { judge } from './judge.js';

const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err: { code?: string }) => err.code,
  );
let umask = 0;
beforeEach(() => {
  umask = process.umask(0);
});
afterEach(() => {
  process.umask(umask);
});

const edit = { path: 'a.txt', blob: 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391', sessionId: 's', turn: 1 } as never;

describe('the project state directory', () => {
  it('defaults to $XDG_RUNTIME_DIR, else a cache directory in the home — never the shared temp directory', () => {
    expect(defaultStateDir({ XDG_RUNTIME_DIR: '/run/user/1000' })).toBe('/run/user/1000/entity-git/projects');
    expect(defaultStateDir({ XDG_CACHE_HOME: '/home/u/.cache-x' })).toBe('/home/u/.cache-x/entity-git/projects');
    expect(defaultStateDir({ XDG_RUNTIME_DIR: 'relative' })).toBe(join(homedir(), '.cache', 'entity-git', 'projects'));
    expect(defaultStateDir({}).startsWith(tmpdir())).toBe(false);
  });

  it('under umask 000: the directory 0700, the journal and the lock files 0600', async () => {
    const dir = join(await judge.tempDir(), 'state', 'projects');
    const journal = workdirJournal({ dir });
    await journal.write('/some/project', [edit]);
    let lockMode = '';
    await workdirLock({ dir })('/some/project', async () => {
      lockMode = mode(join(dir, readdirSync(dir).find((f) => f.endsWith('.lock'))!));
    });
    expect([mode(dir), mode(join(dir, '..')), lockMode, ...readdirSync(dir).map((f) => mode(join(dir, f)))]).toEqual([
      '700',
      '700',
      '600',
      '600',
    ]);
    expect(await journal.read('/some/project')).toEqual([edit]);
  });

  it('refuses a directory others may write in, a link, or one another user owns: UNSAFE_DIRECTORY, nothing read or written', async () => {
    const base = await judge.tempDir();
    const open = join(base, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect(await codeOf(workdirJournal({ dir: open }).read('/p'))).toBe('UNSAFE_DIRECTORY');
    expect(await codeOf(workdirLock({ dir: open })('/p', async () => 'ran'))).toBe('UNSAFE_DIRECTORY');
    const group = join(base, 'group');
    mkdirSync(group);
    chmodSync(group, 0o770);
    expect(await codeOf(workdirJournal({ dir: group }).write('/p', [edit]))).toBe('UNSAFE_DIRECTORY');
    expect(readdirSync(group)).toEqual([]);
    const real = join(base, 'real');
    mkdirSync(real, { mode: 0o700 });
    symlinkSync(real, join(base, 'link'));
    expect(await codeOf(ensurePrivateDir(join(base, 'link')))).toBe('UNSAFE_DIRECTORY');
    const mine = join(base, 'mine');
    mkdirSync(mine, { mode: 0o700 });
    expect(await codeOf(ensurePrivateDir(mine, statSync(mine).uid + 1))).toBe('UNSAFE_DIRECTORY');
    if (process.getuid?.() === 0) {
      const theirs = join(base, 'theirs');
      mkdirSync(theirs, { mode: 0o700 });
      chownSync(theirs, 65534, 65534);
      expect(await codeOf(workdirJournal({ dir: theirs }).read('/p'))).toBe('UNSAFE_DIRECTORY');
    }
  });
});
