import * as fsp from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  EntityGitError,
  createObjectEngine,
  operationsInProgress,
  type CommitDone,
  type CommitRequest,
  type FileState,
  type ProjectGitEngine,
  type RepoOperation,
  type RepoState,
  type WorkdirState,
} from '@entity-git/core';
import { fsErrorCode } from '@entity-git/git';
import { nativeGitAvailable } from './native-git-available.js';
import { nativeIndex } from './native-git-index.js';
import { NATIVE_GIT_ENGINE, ZERO, gitProcess, type NativeGitEngineOptions, type Run } from './native-git-process.js';
import { nativeStatus } from './native-git-status.js';
import { nativeHistory } from './native-git-history.js';
import { nativeUndo } from './native-git-undo.js';
import { nodeCodec, nodeStorage } from './node-storage.js';

export { nativeGitAvailable } from './native-git-available.js';
export { NATIVE_GIT_ENGINE, type NativeGitEngineOptions } from './native-git-process.js';

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/**
 * Native git behind the project-git seam: `git` spawned with `execFile` (never a shell), the
 * environment cleaned of `GIT_*` variables that would redirect it, optional locks off so reads
 * never rewrite the index. A commit is built in a temporary index (`GIT_INDEX_FILE`) from HEAD plus
 * exactly the agent's paths, made with `commit-tree` (no hook runs, nothing is signed), and lands
 * with `update-ref <branch> <new> <old>`; then `update-index --index-info` sets those paths, and
 * only those, in the real index.
 */
export function nativeGitEngine(options: NativeGitEngineOptions = {}): ProjectGitEngine {
  const opts = Object.freeze({ gitPath: 'git', timeoutMs: 120_000, indexLockTimeoutMs: 10_000, ...options });
  const proc = gitProcess(opts);
  const { run, git, failure, refError } = proc;
  const statusOps = nativeStatus(proc);
  const { status, hashPaths } = statusOps;
  const indexOps = nativeIndex(opts, proc);
  const { entriesOf, takeIndexLock, nextIndex, updateIndex } = indexOps;
  const { history, changedPaths, remoteRefsContaining, reflog } = nativeHistory(proc);
  const { undo } = nativeUndo(proc, indexOps, statusOps);

  const exists = async (p: string): Promise<boolean> => (await fsp.lstat(p).catch(() => null)) !== null;

  const operations = (gitdir: string): Promise<RepoOperation[]> =>
    operationsInProgress(
      (name) => exists(join(gitdir, name)),
      (name) => fsp.readFile(join(gitdir, name), 'utf8').catch(() => null),
    );

  async function inspect(workdir: string): Promise<WorkdirState> {
    let st;
    try {
      st = await fsp.stat(workdir);
    } catch (err) {
      const code = fsErrorCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
      throw new EntityGitError(
        'PROJECT_GIT_ERROR',
        `[${NATIVE_GIT_ENGINE}] cannot stat ${workdir}: ${(err as Error).message}`,
        { workdir },
        { cause: err },
      );
    }
    if (!st.isDirectory()) return { kind: 'not-a-directory' };
    const facts = [
      '--absolute-git-dir',
      '--is-bare-repository',
      '--is-inside-git-dir',
      '--is-inside-work-tree',
      '--show-object-format',
    ];
    let r = await run(workdir, ['rev-parse', ...facts, '--show-toplevel', '--show-prefix']);
    if (r.code !== 0) r = await run(workdir, ['rev-parse', ...facts]);
    if (r.code !== 0) {
      // Only git's plain "no repository here or above" means that; naming a path, it found a broken one.
      if (/not a git repository \(or any/i.test(r.stderr)) {
        // A `.git` git cannot read is a damaged repository, not an invitation to init over it.
        if (await exists(join(workdir, '.git'))) throw failure(workdir, ['rev-parse'], r);
        return { kind: 'not-a-repository', entries: (await fsp.readdir(workdir)).sort() };
      }
      throw failure(workdir, ['rev-parse'], r);
    }
    const [gitdir = '', bare, insideGitDir, insideWorkTree, objectFormat, root, prefix = ''] = r.stdout
      .toString('utf8')
      .split('\n');
    if (bare === 'true' || insideGitDir === 'true' || insideWorkTree !== 'true' || root === undefined)
      return { kind: 'bare', gitdir };
    const commonRel = (await fsp.readFile(join(gitdir, 'commondir'), 'utf8').catch(() => null))?.trim();
    const commonDir = commonRel ? resolve(gitdir, commonRel) : gitdir;
    const [sym, head, ops] = await Promise.all([
      run(root, ['symbolic-ref', '-q', 'HEAD']),
      run(root, ['rev-parse', '-q', '--verify', 'HEAD^{commit}']),
      operations(gitdir),
    ]);
    const ref = sym.code === 0 ? sym.stdout.toString('utf8').trim() : '';
    const repo: RepoState = {
      root,
      prefix: prefix.replace(/\/+$/, ''),
      gitdir,
      commonDir,
      linkedWorktree: commonDir !== gitdir,
      branch: ref.startsWith('refs/heads/') ? ref : null,
      head: head.code === 0 ? head.stdout.toString('utf8').trim() : null,
      operations: ops,
      unsupported: objectFormat === 'sha1' ? null : `a ${objectFormat} repository`,
    };
    return { kind: 'repository', repo };
  }

  async function init(workdir: string, options: { initialBranch?: string }): Promise<void> {
    await git(workdir, ['init', '-q', ...(options.initialBranch ? [`--initial-branch=${options.initialBranch}`] : [])]);
  }

  async function commit(repo: RepoState, req: CommitRequest): Promise<CommitDone | null> {
    if (repo.branch === null)
      throw new EntityGitError('PROJECT_GIT_ERROR', `[${NATIVE_GIT_ENGINE}] no branch to commit on (HEAD is detached)`);
    const branch = repo.branch;
    // git's own index lock, held from the first look to the last write, as `git commit` holds it: a
    // user's git that holds it (an amend whose editor is open, or a lock a killed git left) makes us
    // move nothing; and while we hold it no git of the user's can commit on the branch we move.
    const lock = await takeIndexLock(repo);
    let held = true;
    const dir = await fsp.mkdtemp(join(tmpdir(), 'entity-git-index-'));
    try {
      const env = { GIT_INDEX_FILE: join(dir, 'index') };
      await git(repo.root, repo.head === null ? ['read-tree', '--empty'] : ['read-tree', repo.head], { env });
      await git(repo.root, ['update-index', '--add', '--remove', '--replace', '-z', '--stdin'], {
        env,
        input: req.paths.map((p) => `${p}\0`).join(''),
      });
      const entries = await entriesOf(repo.root, env, req.paths);
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
      const tree = (await git(repo.root, ['write-tree'], { env })).trim();
      const headTree =
        repo.head === null ? EMPTY_TREE : (await git(repo.root, ['rev-parse', `${repo.head}^{tree}`])).trim();
      if (tree === headTree) return null;
      const who = {
        GIT_AUTHOR_NAME: req.author.name,
        GIT_AUTHOR_EMAIL: req.author.email,
        GIT_AUTHOR_DATE: `@${req.author.time} +0000`,
        GIT_COMMITTER_NAME: req.committer.name,
        GIT_COMMITTER_EMAIL: req.committer.email,
        GIT_COMMITTER_DATE: `@${req.committer.time} +0000`,
      };
      const args = ['commit-tree', tree, ...(repo.head === null ? [] : ['-p', repo.head]), '--no-gpg-sign', '-F', '-'];
      const commitId = (await git(repo.root, args, { env: who, input: req.message })).trim();
      // A checkout meanwhile would otherwise put the commit on a branch the user has left.
      const sym = await run(repo.root, ['symbolic-ref', '-q', 'HEAD']);
      if (sym.code !== 0 || sym.stdout.toString('utf8').trim() !== branch) {
        throw new EntityGitError('REF_CONFLICT', `[${NATIVE_GIT_ENGINE}] HEAD no longer names ${branch}`, { branch });
      }
      // The real index as it will be, built in a copy while the lock keeps the original still, and
      // written into the lock before the branch moves: after the move only a rename is left.
      const next = await nextIndex(repo, dir, entries);
      await fsp.writeFile(lock, next);
      if (req.beforeBranchMoves) await req.beforeBranchMoves(commitId);
      const update = ['update-ref', '-m', req.reflogMessage, branch, commitId, repo.head ?? ZERO];
      const moved = await run(repo.root, update, { env: who });
      if (moved.code !== 0) throw refError(repo.root, update, moved);
      try {
        await fsp.rename(lock, join(repo.gitdir, 'index'));
        held = false;
      } catch (err) {
        throw new EntityGitError(
          'PROJECT_GIT_ERROR',
          `[${NATIVE_GIT_ENGINE}] cannot rename ${lock} into place: ${(err as Error).message}`,
          { committed: true, lock },
          { cause: err },
        );
      }
      return { commit: commitId, tree, parent: repo.head, branch, entries };
    } finally {
      if (held) await fsp.rm(lock, { force: true });
      await fsp.rm(dir, { recursive: true, force: true });
    }
  }

  async function treeEntries(repo: RepoState, commit: string | null, paths: readonly string[]): Promise<FileState[]> {
    const found = new Map<string, FileState>();
    if (commit !== null && paths.length > 0) {
      // Without -r: a path that is a directory there shows as a tree, which is no file (absent).
      for (const line of (await git(repo.root, ['ls-tree', '-z', '--full-tree', commit, '--', ...paths])).split('\0')) {
        const tab = line.indexOf('\t');
        if (tab < 0) continue;
        const [mode, type, oid] = line.slice(0, tab).split(' ');
        if (type !== 'tree') found.set(line.slice(tab + 1), { path: line.slice(tab + 1), oid: oid!, mode: mode! });
      }
    }
    return paths.map((p) => found.get(p) ?? { path: p, oid: null, mode: null });
  }

  return Object.freeze({
    name: NATIVE_GIT_ENGINE,
    inspect,
    status,
    hashPaths,
    init,
    commit,
    treeEntries,
    updateIndex,
    history,
    changedPaths,
    remoteRefsContaining,
    reflog,
    undo,
  });
}

/**
 * The project-git engine for Node: native git when a git ≥ 2.29 is on PATH (trusted on any real
 * repository, and fast on large trees), else core's object engine ({@link createObjectEngine}) over node:fs.
 */
export function defaultProjectGitEngine(options: NativeGitEngineOptions = {}): ProjectGitEngine {
  if (nativeGitAvailable(options.gitPath ?? 'git')) return nativeGitEngine(options);
  return createObjectEngine({ storage: nodeStorage(), codec: nodeCodec });
}
