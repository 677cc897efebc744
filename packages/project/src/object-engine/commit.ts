import {
  EntityGitError,
  ObjectStore,
  buildCommit,
  buildTree,
  parseCommit,
  parseTree,
  type TreeEntry,
  RefStore,
  ZERO_OID,
  type StorageStat,
  type Identity,
  joinPath,
} from '@entity-git/git';
import {
  applicableUpdates,
  type CommitDone,
  type CommitRequest,
  type FileState,
  type IndexUpdate,
  type RepoState,
} from '../project-git-engine.js';
import { OBJECT_ENGINE, type EngineContext, type Flat } from './context.js';
import type { Discovery } from './discovery.js';
import type { IndexIo } from './index-io.js';
import type { Worktree } from './worktree.js';

export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** HEAD's tree with `changes` applied (null: remove). A file where a directory is needed gives way, as `update-index --replace` does. */
export async function applyToTree(
  objects: ObjectStore,
  tree: string | null,
  changes: ReadonlyMap<string, Flat | null>,
): Promise<string | null> {
  const entries = new Map<string, TreeEntry>();
  if (tree !== null) for (const e of parseTree(await objects.readTyped(tree, 'tree'))) entries.set(e.name, e);
  const nested = new Map<string, Map<string, Flat | null>>();
  for (const [path, value] of changes) {
    const slash = path.indexOf('/');
    if (slash < 0) {
      if (value === null) entries.delete(path);
      else entries.set(path, { mode: value.mode, name: path, oid: value.oid });
      continue;
    }
    const head = path.slice(0, slash);
    const sub = nested.get(head) ?? new Map<string, Flat | null>();
    sub.set(path.slice(slash + 1), value);
    nested.set(head, sub);
  }
  for (const [name, sub] of nested) {
    const existing = entries.get(name);
    if (changes.get(name) !== undefined && changes.get(name) !== null) continue;
    const childTree = existing?.mode === '40000' ? existing.oid : null;
    const next = await applyToTree(objects, childTree, sub);
    if (next === null) entries.delete(name);
    else entries.set(name, { mode: '40000', name, oid: next });
  }
  if (entries.size === 0) return null;
  return objects.write('tree', buildTree([...entries.values()]));
}

/**
 * Move `repo.branch` from `repo.head` to `to` under its lock, the old value checked (`REF_CONFLICT`),
 * with a reflog entry for the branch and for HEAD (a linked worktree's own HEAD log, in its git directory).
 */
export async function moveBranch(
  ctx: EngineContext,
  repo: RepoState,
  to: string,
  who: Identity,
  message: string,
): Promise<void> {
  const refs = new RefStore(ctx.store, repo.commonDir, ctx.USER_REF_OPTIONS);
  await refs.update(repo.branch!, to, { old: repo.head, reflog: { who, message, alsoHead: !repo.linkedWorktree } });
  if (repo.linkedWorktree) {
    const line = `${repo.head ?? ZERO_OID} ${to} ${who.name} <${who.email}> ${Math.floor(Date.now() / 1000)} +0000\t${message.replace(/\n/g, ' ')}\n`;
    await ctx.store.append(joinPath(repo.gitdir, 'logs', 'HEAD'), line);
  }
}

/** The parts of the object engine a commit and an index update go through. */
interface CommitDeps {
  readonly ctx: EngineContext;
  readonly index: IndexIo;
  readonly disc: Discovery;
  readonly wt: Worktree;
}

/** The agent's commit (a tree built from HEAD's, the branch moved under its lock, then the index), and index repair. */
export function commits(ctx: EngineContext, index: IndexIo, disc: Discovery, wt: Worktree) {
  const deps: CommitDeps = Object.freeze({ ctx, index, disc, wt });
  return {
    commit: (repo: RepoState, req: CommitRequest) => commit(deps, repo, req),
    treeEntries: (repo: RepoState, commit: string | null, paths: readonly string[]) =>
      treeEntries(deps, repo, commit, paths),
    updateIndex: (repo: RepoState, updates: readonly IndexUpdate[]) => updateIndex(deps, repo, updates),
  };
}

async function commit(deps: CommitDeps, repo: RepoState, req: CommitRequest): Promise<CommitDone | null> {
  const { ctx } = deps;
  const { store, readText } = ctx;
  const { readIndex, underIndexLock, nextIndex } = deps.index;
  if (repo.branch === null)
    throw new EntityGitError('PROJECT_GIT_ERROR', `[${OBJECT_ENGINE}] no branch to commit on (HEAD is detached)`);
  const branch = repo.branch;
  const objects = new ObjectStore(store, repo.commonDir);
  const fileMode = await deps.disc.fileModeOf(repo);
  // The index lock first, as git commit takes it: a user's git that holds it makes us wait, never the reverse.
  return underIndexLock(repo, async (writeIndex) => {
    const headNow = ((await readText(joinPath(repo.gitdir, 'HEAD'))) ?? '').trim();
    if (headNow !== `ref: ${branch}`)
      throw new EntityGitError('REF_CONFLICT', `[${OBJECT_ENGINE}] HEAD no longer names ${branch}`, { branch });
    const { index, mtime: indexStat } = await readIndex(repo.gitdir);
    const indexModes = new Map(index.entries.filter((e) => e.stage === 0).map((e) => [e.path, e.mode]));
    const captured: Array<{ state: FileState; st: StorageStat | null; data: Uint8Array | null }> = [];
    for (const path of req.paths) captured.push(await deps.wt.capture(repo.root, path, fileMode, indexModes.get(path)));
    if (req.expect) {
      const expected = new Map(req.expect.map((f) => [f.path, f.oid]));
      const moved = captured
        .filter((c) => expected.has(c.state.path) && expected.get(c.state.path) !== c.state.oid)
        .map((c) => c.state.path);
      if (moved.length > 0)
        throw new EntityGitError(
          'WORKTREE_CHANGED',
          `[${OBJECT_ENGINE}] ${moved.join(', ')} changed since the agent's edit was recorded`,
          { paths: moved },
        );
    }
    const changes = new Map<string, Flat | null>();
    for (const c of captured) {
      if (c.data !== null && c.state.oid !== null) await objects.write('blob', c.data);
      changes.set(c.state.path, c.state.oid === null ? null : { mode: c.state.mode!, oid: c.state.oid });
    }
    const headTree = repo.head === null ? null : parseCommit(await objects.readTyped(repo.head, 'commit')).tree;
    const tree = (await applyToTree(objects, headTree, changes)) ?? (await objects.write('tree', new Uint8Array(0)));
    if (tree === (headTree ?? EMPTY_TREE)) return null;
    const commitId = await objects.write(
      'commit',
      buildCommit({
        tree,
        parents: repo.head === null ? [] : [repo.head],
        author: req.author,
        committer: req.committer,
        message: req.message,
      }),
    );
    const who = { name: req.committer.name, email: req.committer.email };
    if (req.beforeBranchMoves) await req.beforeBranchMoves(commitId);
    await moveBranch(ctx, repo, commitId, who, req.reflogMessage);
    await writeIndex(nextIndex(index, indexStat, captured));
    const entries = captured.map((c) => c.state);
    return { commit: commitId, tree, parent: repo.head, branch, entries };
  });
}

async function treeEntries(
  { ctx }: CommitDeps,
  repo: RepoState,
  commit: string | null,
  paths: readonly string[],
): Promise<FileState[]> {
  const absent = (path: string): FileState => ({ path, oid: null, mode: null });
  if (commit === null) return paths.map(absent);
  const objects = new ObjectStore(ctx.store, repo.commonDir);
  const root = parseCommit(await objects.readTyped(commit, 'commit')).tree;
  const trees = new Map<string, TreeEntry[]>();
  const entriesOf = async (tree: string) => {
    let e = trees.get(tree);
    if (e === undefined) trees.set(tree, (e = parseTree(await objects.readTyped(tree, 'tree'))));
    return e;
  };
  const out: FileState[] = [];
  for (const path of paths) {
    let tree: string | null = root;
    let found: FileState = absent(path);
    const parts = path.split('/');
    for (let i = 0; i < parts.length && tree !== null; i++) {
      const e: TreeEntry | undefined = (await entriesOf(tree)).find((x) => x.name === parts[i]);
      tree = null;
      if (e === undefined) break;
      if (i < parts.length - 1) tree = e.mode === '40000' ? e.oid : null;
      else if (e.mode !== '40000') found = { path, oid: e.oid, mode: e.mode };
    }
    out.push(found);
  }
  return out;
}

async function updateIndex(
  deps: CommitDeps,
  repo: RepoState,
  updates: readonly IndexUpdate[],
): Promise<Array<FileState | null>> {
  const { readIndex, underIndexLock, nextIndex } = deps.index;
  const fileMode = await deps.disc.fileModeOf(repo);
  return underIndexLock(repo, async (writeIndex) => {
    const { index, mtime: indexStat } = await readIndex(repo.gitdir);
    const found = updates.map((u): FileState | null => {
      const at = index.entries.filter((e) => e.path === u.path);
      if (at.some((e) => e.stage !== 0)) return null;
      const e = at[0];
      return e === undefined
        ? { path: u.path, oid: null, mode: null }
        : { path: u.path, oid: e.oid, mode: e.mode.toString(8) };
    });
    const apply = applicableUpdates(updates, found);
    if (apply.length === 0) return found;
    const set: Array<{ state: FileState; st: StorageStat | null }> = [];
    for (const u of apply) {
      // Stat data only when the working file holds exactly the entry (as git's refresh would record it); else none, so it is hashed.
      const c =
        u.entry.oid === null ? null : await deps.wt.capture(repo.root, u.path, fileMode, parseInt(u.entry.mode!, 8));
      set.push({
        state: u.entry,
        st: c !== null && c.state.oid === u.entry.oid && c.state.mode === u.entry.mode ? c.st : null,
      });
    }
    await writeIndex(nextIndex(index, indexStat, set));
    return found;
  });
}
