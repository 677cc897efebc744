import {
  buildCommit,
  dirname,
  EntityGitError,
  fromUtf8,
  joinPath,
  ObjectStore,
  parseCommit,
  RefStore,
  type StorageStat,
} from '@entity-git/git';
import { sameEntry, type FileState, type RepoState, type UndoDone, type UndoRequest } from '../project-git-engine.js';
import { applyToTree, moveBranch } from './commit.js';
import { OBJECT_ENGINE, type EngineContext, type Flat } from './context.js';
import type { Discovery } from './discovery.js';
import type { IndexIo } from './index-io.js';
import type { Worktree } from './worktree.js';

const LINK = '120000';

/** The parts of the object engine an undo goes through. */
interface UndoDeps {
  readonly ctx: EngineContext;
  readonly index: IndexIo;
  readonly disc: Discovery;
  readonly wt: Worktree;
}

/** The undo of an agent commit on core's object layer: checked under `index.lock`, the branch moved, then exactly its paths written and staged. */
export function undoing(ctx: EngineContext, index: IndexIo, disc: Discovery, wt: Worktree) {
  const deps: UndoDeps = Object.freeze({ ctx, index, disc, wt });
  return { undo: (repo: RepoState, req: UndoRequest) => undo(deps, repo, req) };
}

/** The paths of `expect` whose index entry (stage 0, and no conflict stage) or working-tree file differs from it. */
async function moved(
  { wt }: UndoDeps,
  repo: RepoState,
  entries: ReadonlyArray<{ path: string; stage: number; oid: string; mode: number }>,
  expect: readonly FileState[],
  fileMode: boolean,
): Promise<string[]> {
  const out: string[] = [];
  for (const e of expect) {
    const at = entries.filter((x) => x.path === e.path);
    const staged = at.find((x) => x.stage === 0);
    const inIndex: FileState | null = at.some((x) => x.stage !== 0)
      ? null
      : staged === undefined
        ? { path: e.path, oid: null, mode: null }
        : { path: e.path, oid: staged.oid, mode: staged.mode.toString(8) };
    const inTree = (await wt.capture(repo.root, e.path, fileMode, staged?.mode)).state;
    if (inIndex === null || !sameEntry(inIndex, e) || !sameEntry(inTree, e)) out.push(e.path);
  }
  return out;
}

/** Remove the file at `path` and the directories that leaves empty, up to the top of the working tree. */
async function removeFile({ store }: EngineContext, root: string, path: string): Promise<void> {
  await store.remove(joinPath(root, path));
  for (let dir = dirname(path); dir !== '' && dir !== '.' && dir !== '/'; dir = dirname(dir))
    if (!(await store.removeEmptyDir(joinPath(root, dir)))) break;
}

async function writeFile(
  { store, fs }: EngineContext,
  objects: ObjectStore,
  root: string,
  e: FileState,
): Promise<void> {
  const full = joinPath(root, e.path);
  const data = await objects.readTyped(e.oid!, 'blob');
  const st = await store.lstat(full);
  if (st?.isDirectory()) await store.removeEmptyDir(full);
  else if (st !== null) await store.remove(full);
  await store.mkdirp(dirname(full));
  if (e.mode === LINK) await fs.symlink!(fromUtf8(data), full);
  else await fs.writeFile(full, data, { mode: e.mode === '100755' ? 0o755 : 0o644 });
}

async function undo(deps: UndoDeps, repo: RepoState, req: UndoRequest): Promise<UndoDone> {
  const { ctx } = deps;
  const { store, fs, readText, USER_REF_OPTIONS } = ctx;
  const { readIndex, underIndexLock, nextIndex } = deps.index;
  if (repo.branch === null || repo.head === null)
    throw new EntityGitError('PROJECT_GIT_ERROR', `[${OBJECT_ENGINE}] no branch commit to undo on`);
  const { branch, head } = repo;
  if (req.entries.some((e) => e.mode === LINK) && !fs.symlink)
    throw new EntityGitError(
      'PROJECT_GIT_ERROR',
      `[${OBJECT_ENGINE}] the undo restores a symbolic link and this file system cannot make links`,
    );
  const objects = new ObjectStore(store, repo.commonDir);
  const refs = new RefStore(store, repo.commonDir, USER_REF_OPTIONS);
  const fileMode = await deps.disc.fileModeOf(repo);
  return underIndexLock(repo, async (writeIndex) => {
    const headNow = ((await readText(joinPath(repo.gitdir, 'HEAD'))) ?? '').trim();
    if (headNow !== `ref: ${branch}` || (await refs.resolve(branch)) !== head)
      throw new EntityGitError('REF_CONFLICT', `[${OBJECT_ENGINE}] ${branch} moved meanwhile`, { branch });
    const { index, mtime: indexStat } = await readIndex(repo.gitdir);
    const changed = await moved(deps, repo, index.entries, req.expect, fileMode);
    if (changed.length > 0)
      throw new EntityGitError(
        'WORKTREE_CHANGED',
        `[${OBJECT_ENGINE}] ${changed.join(', ')} changed since the undo was decided`,
        { paths: changed },
      );
    const target = req.to.kind === 'reset' ? req.to.commit : await revertCommit(objects, head, req.entries, req.to);
    if (req.beforeBranchMoves) await req.beforeBranchMoves(target);
    await moveBranch(ctx, repo, target, req.who, req.reflogMessage);
    await writeIndex(nextIndex(index, indexStat, await restore(deps, objects, repo, req.entries, fileMode)));
    return { commit: target, parent: head, branch };
  });
}

/** The commit that takes the agent's back: HEAD's tree with `entries` applied, on top of HEAD. */
async function revertCommit(
  objects: ObjectStore,
  head: string,
  entries: readonly FileState[],
  to: Extract<UndoRequest['to'], { kind: 'commit' }>,
): Promise<string> {
  const changes = new Map<string, Flat | null>(
    entries.map((e) => [e.path, e.oid === null ? null : { mode: e.mode!, oid: e.oid }]),
  );
  const headTree = parseCommit(await objects.readTyped(head, 'commit')).tree;
  const tree = (await applyToTree(objects, headTree, changes)) ?? (await objects.write('tree', new Uint8Array(0)));
  return objects.write(
    'commit',
    buildCommit({ tree, parents: [head], author: to.author, committer: to.committer, message: to.message }),
  );
}

/** `entries` written into the working tree; what the index gets for each (stat data only where the file holds the entry). */
async function restore(
  deps: UndoDeps,
  objects: ObjectStore,
  repo: RepoState,
  entries: readonly FileState[],
  fileMode: boolean,
): Promise<Array<{ state: FileState; st: StorageStat | null }>> {
  // Removals first, so a file that gives way to a directory (or the reverse) never meets itself.
  for (const e of entries) if (e.oid === null) await removeFile(deps.ctx, repo.root, e.path);
  const set: Array<{ state: FileState; st: StorageStat | null }> = [];
  for (const e of entries) {
    if (e.oid === null) {
      set.push({ state: e, st: null });
      continue;
    }
    await writeFile(deps.ctx, objects, repo.root, e);
    const c = await deps.wt.capture(repo.root, e.path, fileMode, parseInt(e.mode!, 8));
    set.push({ state: e, st: sameEntry(c.state, e) ? c.st : null });
  }
  return set;
}
