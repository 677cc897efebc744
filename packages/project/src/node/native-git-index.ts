import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { EntityGitError } from '@entity-git/core';
import { applicableUpdates, type FileState, type IndexUpdate, type RepoState } from '../index.js';
import { fsErrorCode } from '@entity-git/git';
import { NATIVE_GIT_ENGINE, ZERO, sleep, type GitProcess, type NativeGitOptions } from './native-git-process.js';

/** The options and the process runner the index operations use. */
interface IndexDeps {
  readonly opts: NativeGitOptions;
  readonly proc: GitProcess;
}

/** The user's index: git's `index.lock` taken, entries read, and exactly the agent's paths set. */
export function nativeIndex(opts: NativeGitOptions, proc: GitProcess) {
  const deps: IndexDeps = Object.freeze({ opts, proc });
  return {
    entriesOf: (root: string, env: NodeJS.ProcessEnv, wanted: readonly string[]) => entriesOf(proc, root, env, wanted),
    takeIndexLock: (repo: RepoState) => takeIndexLock(opts, repo),
    nextIndex: (repo: RepoState, dir: string, entries: readonly FileState[]) => nextIndex(proc, repo, dir, entries),
    updateIndex: (repo: RepoState, updates: readonly IndexUpdate[]) => updateIndex(deps, repo, updates),
  };
}

/** Index entries of `index` (stage 0) for `wanted`: mode and blob, or absent. */
async function entriesOf(
  { git }: GitProcess,
  root: string,
  env: NodeJS.ProcessEnv,
  wanted: readonly string[],
): Promise<FileState[]> {
  const want = new Set(wanted);
  const found = new Map<string, FileState>();
  for (const line of (await git(root, ['ls-files', '-s', '-z'], { env })).split('\0')) {
    const tab = line.indexOf('\t');
    if (tab < 0) continue;
    const path = line.slice(tab + 1);
    if (!want.has(path)) continue;
    const [mode, oid] = line.slice(0, tab).split(' ');
    found.set(path, { path, oid: oid!, mode: mode! });
  }
  return wanted.map((p) => found.get(p) ?? { path: p, oid: null, mode: null });
}

/**
 * Create `index.lock` exclusively (git's protocol), waiting up to `indexLockTimeoutMs` for
 * someone else's; never taken over, however old (a lock in the user's repository is git's to
 * judge). `REF_LOCKED` when it stays held.
 */
async function takeIndexLock(opts: NativeGitOptions, repo: RepoState): Promise<string> {
  const lock = join(repo.gitdir, 'index.lock');
  const deadline = Date.now() + opts.indexLockTimeoutMs;
  for (let wait = 10; ; wait = Math.min(wait * 2, 250)) {
    try {
      await (await fsp.open(lock, 'wx')).close();
      return lock;
    } catch (err) {
      if (fsErrorCode(err) !== 'EEXIST')
        throw new EntityGitError(
          'PROJECT_GIT_ERROR',
          `[${NATIVE_GIT_ENGINE}] cannot create ${lock}: ${(err as Error).message}`,
          { lock },
          { cause: err },
        );
    }
    if (Date.now() > deadline) {
      throw new EntityGitError(
        'REF_LOCKED',
        `[${NATIVE_GIT_ENGINE}] the index is locked by another git (${lock} exists; if no git is running, remove it)`,
        { lock, committed: false },
      );
    }
    await sleep(wait);
  }
}

/** The bytes of the real index with exactly `entries` set (and their stat data refreshed), made from a copy. */
async function nextIndex(
  { run, git }: GitProcess,
  repo: RepoState,
  dir: string,
  entries: readonly FileState[],
): Promise<Buffer> {
  const copy = join(dir, 'next-index');
  const current = await fsp.readFile(join(repo.gitdir, 'index')).catch((err: unknown) => {
    if (fsErrorCode(err) === 'ENOENT') return null;
    throw err;
  });
  if (current !== null) await fsp.writeFile(copy, current);
  const env = { GIT_INDEX_FILE: copy };
  const lines = [
    ...entries.filter((e) => e.oid === null).map((e) => `0 ${ZERO}\t${e.path}\0`),
    ...entries.filter((e) => e.oid !== null).map((e) => `${e.mode} ${e.oid}\t${e.path}\0`),
  ].join('');
  await git(repo.root, ['update-index', '-z', '--index-info'], { env, input: lines });
  await run(repo.root, ['update-index', '-q', '--refresh'], { env });
  return fsp.readFile(copy);
}

/** `update-index --index-info` of exactly `entries` (null oid: removed) into the real index, waiting for someone else's `index.lock`; then a stat refresh. */
async function writeIndexInfo(
  { opts, proc: { run, failure } }: IndexDeps,
  repo: RepoState,
  entries: readonly FileState[],
): Promise<void> {
  // Removals first, so a file replaced by a directory (or the reverse) never meets itself.
  const lines = [
    ...entries.filter((e) => e.oid === null).map((e) => `0 ${ZERO}\t${e.path}\0`),
    ...entries.filter((e) => e.oid !== null).map((e) => `${e.mode} ${e.oid}\t${e.path}\0`),
  ].join('');
  const deadline = Date.now() + opts.indexLockTimeoutMs;
  for (let wait = 10; ; wait = Math.min(wait * 2, 250)) {
    const r = await run(repo.root, ['update-index', '-z', '--index-info'], { input: lines });
    if (r.code === 0) {
      // `--index-info` leaves the entries without stat data; git's own refresh fills it in (for
      // entries whose content matches only), so plumbing like `diff-files` sees them clean too.
      await run(repo.root, ['update-index', '-q', '--refresh']);
      return;
    }
    if (/index\.lock/.test(r.stderr) && Date.now() > deadline) {
      throw new EntityGitError(
        'REF_LOCKED',
        `[${NATIVE_GIT_ENGINE}] the index is locked by another git: ${r.stderr.trim()}`,
        { args: ['update-index', '--index-info'], stderr: r.stderr },
      );
    }
    if (!/index\.lock/.test(r.stderr)) throw failure(repo.root, ['update-index', '--index-info'], r);
    await sleep(wait);
  }
}

async function updateIndex(
  deps: IndexDeps,
  repo: RepoState,
  updates: readonly IndexUpdate[],
): Promise<Array<FileState | null>> {
  if (updates.length === 0) return [];
  const wanted = new Set(updates.map((u) => u.path));
  const stage0 = new Map<string, FileState>();
  const conflicted = new Set<string>();
  for (const line of (await deps.proc.git(repo.root, ['ls-files', '-s', '-z', '--', ...wanted])).split('\0')) {
    const tab = line.indexOf('\t');
    if (tab < 0) continue;
    const path = line.slice(tab + 1);
    if (!wanted.has(path)) continue;
    const [mode, oid, stage] = line.slice(0, tab).split(' ');
    if (stage !== '0') conflicted.add(path);
    else stage0.set(path, { path, oid: oid!, mode: mode! });
  }
  const found = updates.map((u): FileState | null =>
    conflicted.has(u.path) ? null : (stage0.get(u.path) ?? { path: u.path, oid: null, mode: null }),
  );
  const apply = applicableUpdates(updates, found);
  if (apply.length > 0)
    await writeIndexInfo(
      deps,
      repo,
      apply.map((u) => ({ ...u.entry, path: u.path })),
    );
  return found;
}
