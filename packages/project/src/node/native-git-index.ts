import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { EntityGitError } from '@entity-git/core';
import type { FileState, RepoState } from '../index.js';
import { fsErrorCode } from '@entity-git/git';
import { NATIVE_GIT_ENGINE, ZERO, failure, sleep, type GitProcess } from './native-git-process.js';

/** `update-index --index-info` lines setting exactly `entries` (null oid: removed); removals first, so a file replaced by a directory (or the reverse) never meets itself. */
export const indexInfo = (entries: readonly FileState[]): string =>
  [
    ...entries.filter((e) => e.oid === null).map((e) => `0 ${ZERO}\t${e.path}\0`),
    ...entries.filter((e) => e.oid !== null).map((e) => `${e.mode} ${e.oid}\t${e.path}\0`),
  ].join('');

/**
 * The user's index as git's own protocol has it: `index.lock` taken exclusively, entries read, and
 * exactly the agent's paths set, waiting up to `lockTimeoutMs` for someone else's lock.
 */
export class NativeIndex {
  readonly #proc: GitProcess;
  readonly #lockTimeoutMs: number;

  constructor(proc: GitProcess, lockTimeoutMs: number) {
    this.#proc = proc;
    this.#lockTimeoutMs = lockTimeoutMs;
  }

  /** Index entries of the index `env` names (stage 0) for `wanted`: mode and blob, or absent. */
  async entriesOf(root: string, env: NodeJS.ProcessEnv, wanted: readonly string[]): Promise<FileState[]> {
    const want = new Set(wanted);
    const found = new Map<string, FileState>();
    for (const line of (await this.#proc.git(root, ['ls-files', '-s', '-z'], { env })).split('\0')) {
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
   * Create `index.lock` exclusively (git's protocol), waiting up to the lock timeout for
   * someone else's; never taken over, however old (a lock in the user's repository is git's to
   * judge). `REF_LOCKED` when it stays held.
   */
  async takeLock(repo: RepoState): Promise<string> {
    const lock = join(repo.gitdir, 'index.lock');
    const deadline = Date.now() + this.#lockTimeoutMs;
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

  /** The bytes of the real index with exactly `entries` set (and their stat data refreshed), made from a copy in `dir`. */
  async next(repo: RepoState, dir: string, entries: readonly FileState[]): Promise<Buffer> {
    const copy = join(dir, 'next-index');
    const current = await fsp.readFile(join(repo.gitdir, 'index')).catch((err: unknown) => {
      if (fsErrorCode(err) === 'ENOENT') return null;
      throw err;
    });
    if (current !== null) await fsp.writeFile(copy, current);
    const env = { GIT_INDEX_FILE: copy };
    await this.#proc.git(repo.root, ['update-index', '-z', '--index-info'], { env, input: indexInfo(entries) });
    await this.#proc.run(repo.root, ['update-index', '-q', '--refresh'], { env });
    return fsp.readFile(copy);
  }

  /** `update-index --index-info` of exactly `entries` into the real index, waiting for someone else's `index.lock`; then a stat refresh. */
  async write(repo: RepoState, entries: readonly FileState[]): Promise<void> {
    const input = indexInfo(entries);
    const deadline = Date.now() + this.#lockTimeoutMs;
    for (let wait = 10; ; wait = Math.min(wait * 2, 250)) {
      const r = await this.#proc.run(repo.root, ['update-index', '-z', '--index-info'], { input });
      if (r.code === 0) {
        // `--index-info` leaves the entries without stat data; git's own refresh fills it in (for
        // entries whose content matches only), so plumbing like `diff-files` sees them clean too.
        await this.#proc.run(repo.root, ['update-index', '-q', '--refresh']);
        return;
      }
      if (/index\.lock/.test(r.stderr) && Date.now() > deadline) {
        throw new EntityGitError(
          'REF_LOCKED',
          `[${NATIVE_GIT_ENGINE}] the index is locked by another git: ${r.stderr.trim()}`,
          { args: ['update-index', '--index-info'], stderr: r.stderr, lock: join(repo.gitdir, 'index.lock') },
        );
      }
      if (!/index\.lock/.test(r.stderr)) throw failure(repo.root, ['update-index', '--index-info'], r);
      await sleep(wait);
    }
  }
}
