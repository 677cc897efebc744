import * as fsp from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { EntityGitError } from '@entity-git/core';
import { sameEntry, type FileState, type RepoState, type UndoDone, type UndoRequest } from '../index.js';
import type { nativeIndex } from './native-git-index.js';
import { NATIVE_GIT_ENGINE, ZERO, type GitProcess } from './native-git-process.js';
import type { nativeStatus } from './native-git-status.js';

/** `update-index --index-info` lines setting exactly `entries` (removals first, so a file giving way to a directory never meets itself). */
const indexInfo = (entries: readonly FileState[]) =>
  [
    ...entries.filter((e) => e.oid === null).map((e) => `0 ${ZERO}\t${e.path}\0`),
    ...entries.filter((e) => e.oid !== null).map((e) => `${e.mode} ${e.oid}\t${e.path}\0`),
  ].join('');

/** The process runner and the index and status operations the undo goes through. */
interface UndoDeps {
  readonly proc: GitProcess;
  readonly index: ReturnType<typeof nativeIndex>;
  readonly status: ReturnType<typeof nativeStatus>;
}

/**
 * The undo of an agent commit through git: under the held `index.lock`, the checks, the revert
 * commit built in a temporary index (`commit-tree`, no hook, unsigned), `update-ref` with the old
 * value, then the files written by `checkout-index` from the next index (so smudge filters and
 * line-ending rules apply as a checkout would), which is refreshed and renamed over the index.
 */
export function nativeUndo(
  proc: GitProcess,
  index: ReturnType<typeof nativeIndex>,
  status: ReturnType<typeof nativeStatus>,
) {
  const deps: UndoDeps = Object.freeze({ proc, index, status });
  return { undo: (repo: RepoState, req: UndoRequest) => undo(deps, repo, req) };
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

async function undo(deps: UndoDeps, repo: RepoState, req: UndoRequest): Promise<UndoDone> {
  const { run, git, refError } = deps.proc;
  if (repo.branch === null || repo.head === null)
    throw new EntityGitError('PROJECT_GIT_ERROR', `[${NATIVE_GIT_ENGINE}] no branch commit to undo on`);
  const { branch, head, root } = repo;
  const lock = await deps.index.takeIndexLock(repo);
  let held = true;
  const dir = await fsp.mkdtemp(join(tmpdir(), 'entity-git-undo-'));
  try {
    const sym = await run(root, ['symbolic-ref', '-q', 'HEAD']);
    const tip = await run(root, ['rev-parse', '-q', '--verify', `${branch}^{commit}`]);
    if (sym.stdout.toString('utf8').trim() !== branch || tip.stdout.toString('utf8').trim() !== head)
      throw new EntityGitError('REF_CONFLICT', `[${NATIVE_GIT_ENGINE}] ${branch} moved meanwhile`, { branch });
    await checkUnchanged(deps, repo, req.expect);
    const target =
      req.to.kind === 'reset' ? req.to.commit : await revertCommit(deps.proc, root, dir, head, req.entries, req.to);
    // The next index, made in a copy while the lock keeps the original still.
    const next = join(dir, 'next-index');
    const current = await fsp.readFile(join(repo.gitdir, 'index')).catch(() => null);
    if (current !== null) await fsp.writeFile(next, current);
    const nextEnv = { GIT_INDEX_FILE: next };
    await git(root, ['update-index', '-z', '--index-info'], { env: nextEnv, input: indexInfo(req.entries) });
    if (req.beforeBranchMoves) await req.beforeBranchMoves(target);
    const update = ['update-ref', '-m', req.reflogMessage, branch, target, head];
    const moved = await run(root, update, {
      env: { GIT_COMMITTER_NAME: req.who.name, GIT_COMMITTER_EMAIL: req.who.email },
    });
    if (moved.code !== 0) throw refError(root, update, moved);
    try {
      for (const e of req.entries) if (e.oid === null) await removeFile(root, e.path);
      const written = req.entries.filter((e) => e.oid !== null).map((e) => `${e.path}\0`);
      if (written.length > 0)
        await git(root, ['checkout-index', '-f', '-z', '--stdin'], { env: nextEnv, input: written.join('') });
      await run(root, ['update-index', '-q', '--refresh'], { env: nextEnv });
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
}

/** `WORKTREE_CHANGED` unless each path of `expect` holds it in the index (stage 0, no conflict) and in the working tree. */
async function checkUnchanged(deps: UndoDeps, repo: RepoState, expect: readonly FileState[]): Promise<void> {
  const { root } = repo;
  const paths = expect.map((e) => e.path);
  const conflicted = new Set(
    (await deps.proc.git(root, ['ls-files', '-u', '-z', '--', ...paths]))
      .split('\0')
      .map((l) => l.slice(l.indexOf('\t') + 1))
      .filter(Boolean),
  );
  const [inIndex, inTree] = await Promise.all([
    deps.index.entriesOf(root, {}, paths),
    deps.status.hashPaths(repo, paths),
  ]);
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

/** The commit that takes the agent's back: HEAD's tree with `entries` set, in a temporary index under `dir`. */
async function revertCommit(
  { git }: GitProcess,
  root: string,
  dir: string,
  head: string,
  entries: readonly FileState[],
  to: Extract<UndoRequest['to'], { kind: 'commit' }>,
): Promise<string> {
  const env = { GIT_INDEX_FILE: join(dir, 'tree-index') };
  await git(root, ['read-tree', head], { env });
  await git(root, ['update-index', '-z', '--index-info'], { env, input: indexInfo(entries) });
  const tree = (await git(root, ['write-tree'], { env })).trim();
  const { author, committer, message } = to;
  return (
    await git(root, ['commit-tree', tree, '-p', head, '--no-gpg-sign', '-F', '-'], {
      input: message,
      env: {
        GIT_AUTHOR_NAME: author.name,
        GIT_AUTHOR_EMAIL: author.email,
        GIT_AUTHOR_DATE: `@${author.time} +0000`,
        GIT_COMMITTER_NAME: committer.name,
        GIT_COMMITTER_EMAIL: committer.email,
        GIT_COMMITTER_DATE: `@${committer.time} +0000`,
      },
    })
  ).trim();
}
