import {
  isAncestor,
  isEntityGitError,
  joinPath,
  ObjectStore,
  parseCommit,
  parseReflog,
  parseTree,
  refsUnder,
  type ReflogEntry,
  type TreeEntry,
} from '@entity-git/git';
import type { CommitRecord, RepoState } from '../project-git-engine.js';
import type { EngineContext } from './context.js';

const TREE = '40000';

/** What the undo reads of a repository's history: a first-parent line, a tree diff, remote-tracking refs, a reflog. Read-only. */
export function historyOf(ctx: EngineContext) {
  const { store, readText } = ctx;

  async function history(repo: RepoState, from: string, max: number): Promise<CommitRecord[]> {
    const objects = new ObjectStore(store, repo.commonDir);
    const out: CommitRecord[] = [];
    for (let id: string | undefined = from; id !== undefined && out.length < max; ) {
      let record: CommitRecord;
      try {
        const o = await objects.read(id);
        if (o.type !== 'commit') break;
        record = { id, ...parseCommit(o.content) };
      } catch (err) {
        // A shallow clone's boundary (or an id the repository lacks) ends the line.
        if (isEntityGitError(err, 'OBJECT_NOT_FOUND')) break;
        throw err;
      }
      out.push(record);
      id = record.parents[0];
    }
    return out;
  }

  async function changedPaths(repo: RepoState, from: string | null, to: string): Promise<string[]> {
    const objects = new ObjectStore(store, repo.commonDir);
    const treeOf = async (commit: string | null) =>
      commit === null ? null : parseCommit(await objects.readTyped(commit, 'commit')).tree;
    const entries = async (tree: string | null) =>
      new Map<string, TreeEntry>(
        tree === null ? [] : parseTree(await objects.readTyped(tree, 'tree')).map((e) => [e.name, e]),
      );
    const out: string[] = [];
    const diff = async (a: string | null, b: string | null, prefix: string): Promise<void> => {
      if (a === b) return;
      const [ea, eb] = await Promise.all([entries(a), entries(b)]);
      for (const name of new Set([...ea.keys(), ...eb.keys()])) {
        const x = ea.get(name);
        const y = eb.get(name);
        if (x !== undefined && y !== undefined && x.oid === y.oid && x.mode === y.mode) continue;
        const path = prefix + name;
        const xTree = x?.mode === TREE ? x.oid : null;
        const yTree = y?.mode === TREE ? y.oid : null;
        if (xTree !== null || yTree !== null) await diff(xTree, yTree, `${path}/`);
        if ((x !== undefined && x.mode !== TREE) || (y !== undefined && y.mode !== TREE)) out.push(path);
      }
    };
    await diff(await treeOf(from), await treeOf(to), '');
    return out.sort();
  }

  async function remoteRefsContaining(repo: RepoState, commit: string): Promise<string[]> {
    const objects = new ObjectStore(store, repo.commonDir);
    const out: string[] = [];
    for (const [ref, oid] of await refsUnder(store, repo.commonDir, 'refs/remotes/'))
      if (await isAncestor(objects, commit, oid)) out.push(ref);
    return out;
  }

  async function reflog(repo: RepoState, ref: string): Promise<ReflogEntry[]> {
    return parseReflog((await readText(joinPath(repo.commonDir, 'logs', ref))) ?? '');
  }

  return { history, changedPaths, remoteRefsContaining, reflog };
}
