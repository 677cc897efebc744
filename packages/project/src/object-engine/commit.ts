import {
  buildTree,
  EntityGitError,
  type Identity,
  joinPath,
  type ObjectStore,
  parseCommit,
  parseTree,
  type TreeEntry,
  ZERO_OID,
} from '@entity-git/git';
import type { FileState, RepoState } from '../project-git-engine.js';
import { type Captured, OBJECT_ENGINE, type RepoFiles } from './repo-files.js';
import type { Flat } from './status.js';

export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** How {@link applyToTree} reads and writes trees: an object store's, or a caller's with a cache of its own. */
export interface TreeIo {
  /** A tree's entries by name. */
  read(oid: string): Promise<ReadonlyMap<string, TreeEntry>>;
  /** Writes a tree of these entries (any order); its id. */
  write(entries: ReadonlyMap<string, TreeEntry>): Promise<string> | string;
}

/** Trees read from and written to `objects` as they are. */
export const storeTrees = (objects: ObjectStore): TreeIo => ({
  read: async (oid) => new Map(parseTree(await objects.readTyped(oid, 'tree')).map((e) => [e.name, e])),
  write: (entries) => objects.write('tree', buildTree([...entries.values()])),
});

/**
 * `tree` with `changes` applied (null: remove); null for an empty tree. A file where a directory
 * is needed gives way, as `update-index --replace` does. Sub-trees are rewritten at once, each
 * write started as soon as its entries are known.
 */
export async function applyToTree(
  io: TreeIo,
  tree: string | null,
  changes: ReadonlyMap<string, Flat | null>,
): Promise<string | null> {
  const entries = new Map(tree === null ? [] : await io.read(tree));
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
  await Promise.all(
    [...nested].map(async ([name, sub]) => {
      if (changes.get(name)) return; // a file or link now stands there
      const existing = entries.get(name);
      const next = await applyToTree(io, existing?.mode === '40000' ? existing.oid : null, sub);
      if (next === null) entries.delete(name);
      else entries.set(name, { mode: '40000', name, oid: next });
    }),
  );
  return entries.size === 0 ? null : io.write(entries);
}

/** Where a branch moves: from `repo.head` to `to`, by `who`, with `message` in the reflogs. */
export interface BranchMove {
  readonly to: string;
  readonly who: Identity;
  readonly message: string;
}

/**
 * Move `repo.branch` from `repo.head` to `move.to` under its lock, the old value checked (`REF_CONFLICT`),
 * with a reflog entry for the branch and for HEAD (a linked worktree's own HEAD log, in its git directory).
 */
export async function moveBranch(files: RepoFiles, repo: RepoState, { to, who, message }: BranchMove): Promise<void> {
  const refs = files.userRefs(repo.commonDir);
  await refs.update(repo.branch!, to, { old: repo.head, reflog: { who, message, alsoHead: !repo.linkedWorktree } });
  if (repo.linkedWorktree) {
    const line = `${repo.head ?? ZERO_OID} ${to} ${who.name} <${who.email}> ${Math.floor(Date.now() / 1000)} +0000\t${message.replace(/\n/g, ' ')}\n`;
    await files.store.append(joinPath(repo.gitdir, 'logs', 'HEAD'), line);
  }
}

/** The entries of a commit's tree at `paths`, in the order given: mode and blob, or a null `oid` where the tree has no file. */
export async function entriesAt(objects: ObjectStore, commit: string, paths: readonly string[]): Promise<FileState[]> {
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
    let found: FileState = { path, oid: null, mode: null };
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

/** The paths of `expect` whose content in `captured` (the working tree now) differs; `WORKTREE_CHANGED` naming them. */
export function checkExpected(captured: readonly Captured[], expect: readonly FileState[]): void {
  const expected = new Map(expect.map((f) => [f.path, f.oid]));
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
