import * as fsp from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EntityGitError } from '@entity-git/core';
import type { CommitDone, CommitRequest, FileState, RepoState } from '../index.js';
import type { nativeIndex } from './native-git-index.js';
import { NATIVE_GIT_ENGINE, ZERO, type GitProcess } from './native-git-process.js';

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** The process runner and the index operations a commit goes through. */
interface CommitDeps {
  readonly proc: GitProcess;
  readonly index: ReturnType<typeof nativeIndex>;
}

/**
 * The agent's commit through git: built in a temporary index (`GIT_INDEX_FILE`) from HEAD plus
 * exactly the agent's paths, made with `commit-tree`, landed with `update-ref <branch> <new> <old>`;
 * and the entries of a commit's tree.
 */
export function nativeCommits(proc: GitProcess, index: ReturnType<typeof nativeIndex>) {
  const deps: CommitDeps = Object.freeze({ proc, index });
  return {
    commit: (repo: RepoState, req: CommitRequest) => commit(deps, repo, req),
    treeEntries: (repo: RepoState, commit: string | null, paths: readonly string[]) =>
      treeEntries(proc, repo, commit, paths),
  };
}

async function commit(deps: CommitDeps, repo: RepoState, req: CommitRequest): Promise<CommitDone | null> {
  const { run, git, refError } = deps.proc;
  const { entriesOf, takeIndexLock, nextIndex } = deps.index;
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

async function treeEntries(
  { git }: GitProcess,
  repo: RepoState,
  commit: string | null,
  paths: readonly string[],
): Promise<FileState[]> {
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
