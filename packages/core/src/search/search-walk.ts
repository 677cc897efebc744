import {
  EntityGitError,
  ObjectStore,
  RefStore,
  fromUtf8,
  joinPath,
  parseCommit,
  parseTree,
  type Store,
  type TreeEntry,
} from '@entity-git/git';
import { parseTrailers } from '../model/commit-message.js';
import type { DagNode } from '../model/types.js';
import { searchText } from './search-text.js';

/** A message file a branch holds, placed at the turn that brought it onto the branch. */
export interface PlacedMessage {
  /** The message file's blob id: the message's identity in the index (same bytes, same message). */
  blob: string;
  node: DagNode;
  /** What search reads of it ({@link searchText}). */
  text: string;
  turn: number;
  commit: string;
}

/** What one branch holds that an index does not have yet. */
export interface BranchChange {
  name: string;
  tip: string;
  /**
   * `extend`: the branch moved forward from the tip the index knew; `messages` are only the new
   * ones. `replace`: new, or moved any other way (a turn committed again); `messages` are all
   * the branch holds, and what the index had for it is to be dropped.
   */
  mode: 'extend' | 'replace';
  messages: PlacedMessage[];
}

/** A repository's changes since the tips an index recorded. */
export interface RepositoryChanges {
  /** The session id, read from `meta.json` (the directory name may be a hash of it). */
  session: string;
  /** The branch HEAD names (null for a repository without a commit yet). */
  head: string | null;
  /** Branches whose tip differs from the one recorded. */
  changed: BranchChange[];
  /** Recorded branches the repository no longer has. */
  gone: string[];
  /** Every branch and its tip now. */
  tips: Map<string, string>;
}

/** A turn's commit on a branch: its id, its number and its highest seq (the `Turn:` and `Seq:` trailers). */
export interface TurnCommit {
  oid: string;
  turn: number;
  seq: number;
}

interface Walked extends TurnCommit {
  tree: string;
}

/** What a caller of {@link readRepositoryChanges} already knows, so as not to read it again. */
export interface KnownRepository {
  /** The repository's session id (else read from `meta.json`). */
  session?: string;
  /**
   * What a sync just reported (its `SyncResult`): only these branches moved, and HEAD names
   * `head`. Only their refs are read; the branches of `known` not named keep their tips (a sync
   * deletes no branch). Without it every ref is listed.
   */
  moved?: { branches: readonly string[]; head: string | null };
}

/**
 * Reads, from a session repository's objects alone, what its branches hold beyond `known` (branch
 * → tip as last indexed). The same function serves a live update after a sync and a rebuild from
 * nothing (`known` empty), so a rebuilt index equals the live one. Null when `dir` holds no
 * repository with a commit.
 */
export async function readRepositoryChanges(
  store: Store,
  dir: string,
  known: ReadonlyMap<string, string>,
  given: KnownRepository = {},
): Promise<RepositoryChanges | null> {
  const gitdir = joinPath(dir, '.git');
  const moved = given.moved;
  if (moved === undefined && (await store.lstat(joinPath(gitdir, 'HEAD'))) === null) return null;
  const refs = new RefStore(store, gitdir);
  const objects = new ObjectStore(store, gitdir);
  const tips = new Map<string, string>(moved === undefined ? [] : known);
  for (const name of moved?.branches ?? (await refs.branches())) {
    const tip = await refs.resolve(`refs/heads/${name}`);
    if (tip !== null) tips.set(name, tip);
  }
  if (tips.size === 0) return null;
  const head = moved === undefined ? await refs.headBranch() : moved.head;
  const anyTip = tips.get(head ?? '') ?? tips.values().next().value!;
  // The session id is in every commit's meta.json; an index that knows the directory knows it.
  const id = given.session ?? (await sessionOf(objects, anyTip));
  const blobs = new Map<string, DagNode>();
  const changed: BranchChange[] = [];
  for (const [name, tip] of tips) {
    if (known.get(name) === tip) continue;
    changed.push(await branchChange(objects, blobs, { name, tip, knownTip: known.get(name) ?? null }));
  }
  const gone = [...known.keys()].filter((b) => !tips.has(b));
  return { session: id, head, changed, gone, tips };
}

async function sessionOf(objects: ObjectStore, commit: string): Promise<string> {
  const tree = parseTree(await objects.readTyped(parseCommit(await objects.readTyped(commit, 'commit')).tree, 'tree'));
  const meta = tree.find((e) => e.name === 'meta.json');
  if (meta === undefined) throw new EntityGitError('REPO_CORRUPT', `commit ${commit} has no meta.json`, { commit });
  const id = (JSON.parse(fromUtf8(await objects.readTyped(meta.oid, 'blob'))) as { id?: unknown }).id;
  if (typeof id !== 'string') throw new EntityGitError('REPO_CORRUPT', `meta.json of ${commit} has no id`, { commit });
  return id;
}

async function branchChange(
  objects: ObjectStore,
  blobs: Map<string, DagNode>,
  b: { name: string; tip: string; knownTip: string | null },
): Promise<BranchChange> {
  // First parents from the tip back to the tip last indexed (or to turn 1): the turns to place.
  const walked: Walked[] = [];
  let at: string | undefined = b.tip;
  let reached: Walked | null = null;
  while (at !== undefined) {
    const c = parseCommit(await objects.readTyped(at, 'commit'));
    const t = parseTrailers(c.message);
    const w = { oid: at, tree: c.tree, turn: t?.turn ?? 0, seq: t?.seq ?? 0 };
    if (at === b.knownTip) {
      reached = w;
      break;
    }
    walked.push(w);
    at = c.parents[0];
  }
  walked.reverse();
  const files = await changedFiles(objects, walked.at(-1)!.tree, reached?.tree ?? null);
  const messages: PlacedMessage[] = [];
  for (const blob of files) {
    let node = blobs.get(blob);
    if (node === undefined) {
      node = JSON.parse(fromUtf8(await objects.readTyped(blob, 'blob'))) as DagNode;
      blobs.set(blob, node);
    }
    const place = placeBySeq(walked, node.seq);
    messages.push({ blob, node, text: searchText(node), turn: place.turn, commit: place.oid });
  }
  return { name: b.name, tip: b.tip, mode: reached ? 'extend' : 'replace', messages };
}

/**
 * The turn of `turns` (oldest first) that brought a message onto its branch. A path's nodes in seq
 * order are cut into turns at user nodes, so a message belongs to the first turn whose highest seq
 * (the `Seq:` trailer) is at least its own. The one rule of a reader of the repository and of a
 * sync's result (`SyncResult.extendedBranches`).
 */
export function placeBySeq<T extends TurnCommit>(walked: readonly T[], seq: number): T {
  let lo = 0;
  let hi = walked.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (walked[mid]!.seq >= seq) hi = mid;
    else lo = mid + 1;
  }
  return walked[lo]!;
}

/** Blob ids of the message files in `tree` that `old` lacks (both layouts: shard trees are followed). */
async function changedFiles(objects: ObjectStore, tree: string, old: string | null): Promise<string[]> {
  const messagesOf = async (t: string): Promise<string | null> =>
    parseTree(await objects.readTyped(t, 'tree')).find((e) => e.name === 'messages')?.oid ?? null;
  const now = await messagesOf(tree);
  if (now === null) return [];
  const out: string[] = [];
  await diffTree(objects, now, old === null ? null : await messagesOf(old), out);
  return out;
}

async function diffTree(objects: ObjectStore, tree: string, old: string | null, out: string[]): Promise<void> {
  if (tree === old) return;
  const before = new Map<string, TreeEntry>();
  if (old !== null) for (const e of parseTree(await objects.readTyped(old, 'tree'))) before.set(e.name, e);
  for (const e of parseTree(await objects.readTyped(tree, 'tree'))) {
    const was = before.get(e.name);
    if (was?.oid === e.oid) continue;
    if (e.mode === '40000') await diffTree(objects, e.oid, was?.mode === '40000' ? was.oid : null, out);
    else if (e.name.endsWith('.json')) out.push(e.oid);
  }
}
