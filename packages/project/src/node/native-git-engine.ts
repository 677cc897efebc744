import * as fsp from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { EntityGitError } from '@entity-git/core';
import { nativeGitAvailable, nodeCodec, nodeStorage } from '@entity-git/node-fs';
import {
  applicableUpdates,
  createObjectEngine,
  sameEntry,
  type CommitDone,
  type CommitRequest,
  type FileState,
  type IndexUpdate,
  type ProjectGitEngine,
  type RepoState,
  type UndoDone,
  type UndoRequest,
} from '../index.js';
import { NativeIndex, indexInfo } from './native-git-index.js';
import {
  EMPTY_TREE,
  GitProcess,
  NATIVE_GIT_ENGINE,
  ZERO,
  refError,
  signatureEnv,
  type NativeGitEngineOptions,
} from './native-git-process.js';
import { NativeGitReads } from './native-git-reads.js';

export { NATIVE_GIT_ENGINE, type NativeGitEngineOptions } from './native-git-process.js';

/**
 * Native git behind the project-git seam: `git` spawned with `execFile` (never a shell), the
 * environment cleaned of `GIT_*` variables that would redirect it, optional locks off so reads
 * never rewrite the index ({@link NativeGitReads}). A commit is built in a temporary index
 * (`GIT_INDEX_FILE`) from HEAD plus exactly the agent's paths, made with `commit-tree` (no hook
 * runs, nothing is signed), and lands with `update-ref <branch> <new> <old>`; then
 * `update-index --index-info` sets those paths, and only those, in the real index.
 */
export class NativeGitEngine extends NativeGitReads implements ProjectGitEngine {
  readonly name = NATIVE_GIT_ENGINE;
  readonly #proc: GitProcess;
  readonly #index: NativeIndex;

  constructor(options: NativeGitEngineOptions = {}) {
    const opts = Object.freeze({ gitPath: 'git', timeoutMs: 120_000, indexLockTimeoutMs: 10_000, ...options });
    const proc = new GitProcess(opts);
    super(proc);
    this.#proc = proc;
    this.#index = new NativeIndex(proc, opts.indexLockTimeoutMs);
    Object.freeze(this);
  }

  readonly init = async (workdir: string, options: { initialBranch?: string }): Promise<void> => {
    const branch = options.initialBranch ? [`--initial-branch=${options.initialBranch}`] : [];
    await this.#proc.git(workdir, ['init', '-q', ...branch]);
  };

  readonly commit = async (repo: RepoState, req: CommitRequest): Promise<CommitDone | null> => {
    const proc = this.#proc;
    if (repo.branch === null)
      throw new EntityGitError('PROJECT_GIT_ERROR', `[${NATIVE_GIT_ENGINE}] no branch to commit on (HEAD is detached)`);
    const branch = repo.branch;
    // git's own index lock, held from the first look to the last write, as `git commit` holds it: a
    // user's git that holds it (an amend whose editor is open, or a lock a killed git left) makes us
    // move nothing; and while we hold it no git of the user's can commit on the branch we move.
    const lock = await this.#index.takeLock(repo);
    let held = true;
    const dir = await fsp.mkdtemp(join(tmpdir(), 'entity-git-index-'));
    try {
      const env = { GIT_INDEX_FILE: join(dir, 'index') };
      await proc.git(repo.root, repo.head === null ? ['read-tree', '--empty'] : ['read-tree', repo.head], { env });
      await proc.git(repo.root, ['update-index', '--add', '--remove', '--replace', '-z', '--stdin'], {
        env,
        input: req.paths.map((p) => `${p}\0`).join(''),
      });
      const entries = await this.#index.entriesOf(repo.root, env, req.paths);
      if (req.expect) {
        const expected = new Map(req.expect.map((f) => [f.path, f.oid]));
        const moved = entries.filter((e) => expected.has(e.path) && expected.get(e.path) !== e.oid);
        if (moved.length > 0)
          throw new EntityGitError(
            'WORKTREE_CHANGED',
            `[${NATIVE_GIT_ENGINE}] ${moved.map((e) => e.path).join(', ')} changed since the agent's edit was recorded`,
            { paths: moved.map((e) => e.path) },
          );
      }
      const tree = (await proc.git(repo.root, ['write-tree'], { env })).trim();
      const headTree =
        repo.head === null ? EMPTY_TREE : (await proc.git(repo.root, ['rev-parse', `${repo.head}^{tree}`])).trim();
      if (tree === headTree) return null;
      const who = signatureEnv(req.author, req.committer);
      const args = ['commit-tree', tree, ...(repo.head === null ? [] : ['-p', repo.head]), '--no-gpg-sign', '-F', '-'];
      const commitId = (await proc.git(repo.root, args, { env: who, input: req.message })).trim();
      // A checkout meanwhile would otherwise put the commit on a branch the user has left.
      const sym = await proc.run(repo.root, ['symbolic-ref', '-q', 'HEAD']);
      if (sym.code !== 0 || sym.stdout.toString('utf8').trim() !== branch) {
        throw new EntityGitError('REF_CONFLICT', `[${NATIVE_GIT_ENGINE}] HEAD no longer names ${branch}`, { branch });
      }
      // The real index as it will be, built in a copy while the lock keeps the original still, and
      // written into the lock before the branch moves: after the move only a rename is left.
      await fsp.writeFile(lock, await this.#index.next(repo, dir, entries));
      if (req.beforeBranchMoves) await req.beforeBranchMoves(commitId);
      const update = ['update-ref', '-m', req.reflogMessage, branch, commitId, repo.head ?? ZERO];
      const moved = await proc.run(repo.root, update, { env: who });
      if (moved.code !== 0) throw refError(repo.root, update, moved);
      await renameLock(lock, repo);
      held = false;
      return { commit: commitId, tree, parent: repo.head, branch, entries };
    } finally {
      if (held) await fsp.rm(lock, { force: true });
      await fsp.rm(dir, { recursive: true, force: true });
    }
  };

  readonly updateIndex = async (repo: RepoState, updates: readonly IndexUpdate[]): Promise<Array<FileState | null>> => {
    if (updates.length === 0) return [];
    const wanted = new Set(updates.map((u) => u.path));
    const stage0 = new Map<string, FileState>();
    const conflicted = new Set<string>();
    for (const line of (await this.#proc.git(repo.root, ['ls-files', '-s', '-z', '--', ...wanted])).split('\0')) {
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
      await this.#index.write(
        repo,
        apply.map((u) => ({ ...u.entry, path: u.path })),
      );
    return found;
  };

  /**
   * The undo of an agent commit through git: under the held `index.lock`, the checks, the revert
   * commit built in a temporary index (`commit-tree`, no hook, unsigned), `update-ref` with the old
   * value, then the files written by `checkout-index` from the next index (so smudge filters and
   * line-ending rules apply as a checkout would), which is refreshed and renamed over the index.
   */
  readonly undo = async (repo: RepoState, req: UndoRequest): Promise<UndoDone> => {
    const proc = this.#proc;
    if (repo.branch === null || repo.head === null)
      throw new EntityGitError('PROJECT_GIT_ERROR', `[${NATIVE_GIT_ENGINE}] no branch commit to undo on`);
    const { branch, head, root } = repo;
    const lock = await this.#index.takeLock(repo);
    let held = true;
    const dir = await fsp.mkdtemp(join(tmpdir(), 'entity-git-undo-'));
    try {
      const sym = await proc.run(root, ['symbolic-ref', '-q', 'HEAD']);
      const tip = await proc.run(root, ['rev-parse', '-q', '--verify', `${branch}^{commit}`]);
      if (sym.stdout.toString('utf8').trim() !== branch || tip.stdout.toString('utf8').trim() !== head)
        throw new EntityGitError('REF_CONFLICT', `[${NATIVE_GIT_ENGINE}] ${branch} moved meanwhile`, { branch });
      await this.#checkUnchanged(repo, req.expect);
      const target =
        req.to.kind === 'reset' ? req.to.commit : await this.#revertCommit({ root, head, dir }, req.entries, req.to);
      // The next index, made in a copy while the lock keeps the original still.
      const next = join(dir, 'next-index');
      const current = await fsp.readFile(join(repo.gitdir, 'index')).catch(() => null);
      if (current !== null) await fsp.writeFile(next, current);
      const nextEnv = { GIT_INDEX_FILE: next };
      await proc.git(root, ['update-index', '-z', '--index-info'], { env: nextEnv, input: indexInfo(req.entries) });
      if (req.beforeBranchMoves) await req.beforeBranchMoves(target);
      const update = ['update-ref', '-m', req.reflogMessage, branch, target, head];
      const moved = await proc.run(root, update, {
        env: { GIT_COMMITTER_NAME: req.who.name, GIT_COMMITTER_EMAIL: req.who.email },
      });
      if (moved.code !== 0) throw refError(root, update, moved);
      try {
        for (const e of req.entries) if (e.oid === null) await removeFile(root, e.path);
        const written = req.entries.filter((e) => e.oid !== null).map((e) => `${e.path}\0`);
        if (written.length > 0)
          await proc.git(root, ['checkout-index', '-f', '-z', '--stdin'], { env: nextEnv, input: written.join('') });
        await proc.run(root, ['update-index', '-q', '--refresh'], { env: nextEnv });
        await fsp.writeFile(lock, await fsp.readFile(next));
        await fsp.rename(lock, join(repo.gitdir, 'index'));
        held = false;
      } catch (err) {
        throw new EntityGitError(
          'PROJECT_GIT_ERROR',
          `[${NATIVE_GIT_ENGINE}] the branch moved, but writing the files or the index failed: ${(err as Error).message}`,
          { committed: true, lock },
          { cause: err },
        );
      }
      return { commit: target, parent: head, branch };
    } finally {
      if (held) await fsp.rm(lock, { force: true });
      await fsp.rm(dir, { recursive: true, force: true });
    }
  };

  /** `WORKTREE_CHANGED` unless each path of `expect` holds it in the index (stage 0, no conflict) and in the working tree. */
  async #checkUnchanged(repo: RepoState, expect: readonly FileState[]): Promise<void> {
    const { root } = repo;
    const paths = expect.map((e) => e.path);
    const conflicted = new Set(
      (await this.#proc.git(root, ['ls-files', '-u', '-z', '--', ...paths]))
        .split('\0')
        .map((l) => l.slice(l.indexOf('\t') + 1))
        .filter(Boolean),
    );
    const [inIndex, inTree] = await Promise.all([this.#index.entriesOf(root, {}, paths), this.hashPaths(repo, paths)]);
    const changed = expect
      .filter((e, i) => conflicted.has(e.path) || !sameEntry(inIndex[i]!, e) || !sameEntry(inTree[i]!, e))
      .map((e) => e.path);
    if (changed.length > 0)
      throw new EntityGitError(
        'WORKTREE_CHANGED',
        `[${NATIVE_GIT_ENGINE}] ${changed.join(', ')} changed since the undo was decided`,
        { paths: changed },
      );
  }

  /** The commit that takes the agent's back: `head`'s tree with `entries` set, in a temporary index under `dir`. */
  async #revertCommit(
    { root, head, dir }: { root: string; head: string; dir: string },
    entries: readonly FileState[],
    to: Extract<UndoRequest['to'], { kind: 'commit' }>,
  ): Promise<string> {
    const env = { GIT_INDEX_FILE: join(dir, 'tree-index') };
    await this.#proc.git(root, ['read-tree', head], { env });
    await this.#proc.git(root, ['update-index', '-z', '--index-info'], { env, input: indexInfo(entries) });
    const tree = (await this.#proc.git(root, ['write-tree'], { env })).trim();
    const args = ['commit-tree', tree, '-p', head, '--no-gpg-sign', '-F', '-'];
    const who = signatureEnv(to.author, to.committer);
    return (await this.#proc.git(root, args, { input: to.message, env: who })).trim();
  }
}

/** Move the written `lock` over the index; a failure here comes after the branch moved (`committed: true`). */
async function renameLock(lock: string, repo: RepoState): Promise<void> {
  try {
    await fsp.rename(lock, join(repo.gitdir, 'index'));
  } catch (err) {
    throw new EntityGitError(
      'PROJECT_GIT_ERROR',
      `[${NATIVE_GIT_ENGINE}] cannot rename ${lock} into place: ${(err as Error).message}`,
      { committed: true, lock },
      { cause: err },
    );
  }
}

/** Remove the file at `path` and the directories that leaves empty, up to the top of the working tree. */
async function removeFile(root: string, path: string): Promise<void> {
  await fsp.rm(join(root, path), { force: true });
  for (let dir = dirname(path); dir !== '.' && dir !== '/' && dir !== ''; dir = dirname(dir)) {
    const gone = await fsp.rmdir(join(root, dir)).then(
      () => true,
      () => false,
    );
    if (!gone) break;
  }
}

/** The native engine with `options` (defaults: `git` on PATH, 120 s a command, 10 s for someone else's `index.lock`). */
export function nativeGitEngine(options: NativeGitEngineOptions = {}): ProjectGitEngine {
  return new NativeGitEngine(options);
}

/**
 * The project-git engine for Node: native git when a git ≥ 2.29 is on PATH (trusted on any real
 * repository, and fast on large trees), else core's object engine ({@link createObjectEngine}) over node:fs.
 */
export function defaultProjectGitEngine(options: NativeGitEngineOptions = {}): ProjectGitEngine {
  if (nativeGitAvailable(options.gitPath ?? 'git')) return new NativeGitEngine(options);
  return createObjectEngine({ storage: nodeStorage(), codec: nodeCodec });
}
