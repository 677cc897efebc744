import type { ObjectStore, TreeEntry } from '@entity-git/git';
import { parseTree } from '@entity-git/git';
import type { Flat } from './status.js';

const TREE = '40000';

/** One path whose file (blob, link or submodule) differs between two trees: null where a side has none. */
export interface TreeChange {
  readonly path: string;
  readonly before: Flat | null;
  readonly after: Flat | null;
}

/**
 * The files that differ between trees `a` and `b` (null: the empty tree), at any depth, sorted by
 * path; a subtree whose id is the same on both sides is not read.
 */
export async function diffTrees(objects: ObjectStore, a: string | null, b: string | null): Promise<TreeChange[]> {
  const entries = async (tree: string | null) =>
    new Map<string, TreeEntry>(
      tree === null ? [] : parseTree(await objects.readTyped(tree, 'tree')).map((e) => [e.name, e]),
    );
  const out: TreeChange[] = [];
  const walk = async (x: string | null, y: string | null, prefix: string): Promise<void> => {
    if (x === y) return;
    const [ex, ey] = await Promise.all([entries(x), entries(y)]);
    for (const name of new Set([...ex.keys(), ...ey.keys()])) {
      const before = ex.get(name);
      const after = ey.get(name);
      if (before !== undefined && after !== undefined && before.oid === after.oid && before.mode === after.mode)
        continue;
      const path = prefix + name;
      const xTree = before?.mode === TREE ? before.oid : null;
      const yTree = after?.mode === TREE ? after.oid : null;
      if (xTree !== null || yTree !== null) await walk(xTree, yTree, `${path}/`);
      const fileBefore = before !== undefined && before.mode !== TREE ? { mode: before.mode, oid: before.oid } : null;
      const fileAfter = after !== undefined && after.mode !== TREE ? { mode: after.mode, oid: after.oid } : null;
      if (fileBefore !== null || fileAfter !== null) out.push({ path, before: fileBefore, after: fileAfter });
    }
  };
  await walk(a, b, '');
  return out.sort((p, q) => (p.path < q.path ? -1 : p.path > q.path ? 1 : 0));
}
