import type { GraphCommit } from './commit-graph.js';
import { writeCommitGraph } from './commit-graph-write.js';
import { ObjectStore } from './object-store.js';
import { parseCommit } from './objects/commit.js';
import { parseTree } from './objects/tree.js';
import { PackBuilder } from './pack/pack-builder.js';
import { idxOids } from './pack/pack-index.js';
import { RefStore } from './refs.js';
import { joinPath } from './storage/paths.js';
import type { Store } from './storage/store.js';

/** What packing a repository did. */
export interface PackReport {
  /** The pack written (`objects/pack/pack-<id>.pack`), or null when there was nothing to pack. */
  pack: string | null;
  /** Objects in the pack, and how many of them are stored as deltas (null: not counted). */
  objects: number;
  deltas: number | null;
  /** Loose object files removed because the pack holds them. */
  looseRemoved: number;
  /** Small packs merged into the new one and removed (a mirror's turn packs). */
  packsRemoved?: number;
  /** Bytes of the pack file. */
  bytes: number;
}

/**
 * The packs to merge, as git's `repack --geometric=2` picks them (by object count): every pack
 * left is at least twice the size of all smaller ones together, so a pack is rewritten a number
 * of times that grows with the logarithm of the history, not with it. Fewer than two: none. A
 * pack with a `.keep` file is never merged (git's convention).
 */
async function packsToMerge(store: Store, gitdir: string): Promise<{ base: string; oids: string[] }[]> {
  const dir = joinPath(gitdir, 'objects', 'pack');
  const names = await store.readdir(dir);
  const packs: { base: string; oids: string[] }[] = [];
  for (const name of names) {
    if (
      !name.endsWith('.idx') ||
      names.includes(name.replace(/\.idx$/, '.keep')) ||
      !names.includes(name.replace(/\.idx$/, '.pack'))
    )
      continue;
    const idx = await store.read(joinPath(dir, name));
    const oids = idx === null ? null : idxOids(idx);
    if (oids !== null) packs.push({ base: joinPath(dir, name.slice(0, -'.idx'.length)), oids });
  }
  if (packs.length < 2) return [];
  packs.sort((a, b) => a.oids.length - b.oids.length || (a.base < b.base ? -1 : 1));
  const size = (i: number) => packs[i]!.oids.length;
  // From the largest down, the first pack less than twice the next smaller: it and all below roll up…
  let split = packs.length - 1;
  while (split > 0 && size(split) >= 2 * size(split - 1)) split--;
  let sum = 0;
  for (let i = 0; i < split; i++) sum += size(i);
  // …and so does each larger one that is less than twice all that rolls up before it.
  while (split < packs.length && size(split) < 2 * sum) sum += size(split++);
  return split >= 2 ? packs.slice(0, split) : [];
}

/** Whether the new pack takes an object: loose, or in a pack being merged (answers cached). */
type TakesObject = (oid: string) => Promise<boolean>;

const loosePath = (gitdir: string, oid: string) => joinPath(gitdir, 'objects', oid.slice(0, 2), oid.slice(2));

/**
 * Pack the loose objects reachable from a repository's branches and `extraRefs` into one new pack
 * (`objects/pack/pack-<id>.pack` and its version-2 `.idx`), with the objects of the small packs
 * {@link packsToMerge} picks (a mirror's turn packs); then remove the loose files the pack holds
 * and the merged packs. Trees are stored as deltas against the same path's tree one turn earlier.
 *
 * Safe beside a sync and a reader: the pack is complete before its index appears (an index
 * written last, by rename, is what makes a pack visible), only loose objects the new pack holds
 * are removed, and an object written meanwhile stays loose. An object of a merged pack that the
 * new pack does not hold (not reachable: a sync that has written its pack and not yet moved its
 * ref, or one that failed) is written loose before its pack goes. Unreachable loose objects are left.
 */
export async function writeRepositoryPack(
  store: Store,
  gitdir: string,
  extraRefs: readonly string[],
): Promise<PackReport> {
  const objects = new ObjectStore(store, gitdir);
  const merging = await packsToMerge(store, gitdir);
  const inMerged = new Set(merging.flatMap((p) => p.oids));
  const packed = new Set<string>();
  const takes: TakesObject = async (oid) => {
    if (inMerged.has(oid)) return true;
    if (packed.has(oid)) return false;
    const loose = (await store.lstat(loosePath(gitdir, oid))) !== null;
    if (!loose) packed.add(oid);
    return loose;
  };
  const commits = await commitsToPack(objects, await packTips(store, gitdir, extraRefs), takes);
  const builder = new PackBuilder(store);
  const graph = await addCommits(builder, objects, commits, takes);
  const written = await builder.write(gitdir);
  if (written === null) return { pack: null, objects: 0, deltas: 0, looseRemoved: 0, bytes: 0, packsRemoved: 0 };
  // The packed commits join the commit-graph (before their loose copies go: it names only
  // commits the repository holds either way).
  await writeCommitGraph(store, gitdir, graph);
  const looseRemoved = await removePackedLoose(store, gitdir, written.oids);
  await retireMerged(store, objects, merging, written);
  return {
    pack: written.pack,
    objects: written.oids.length,
    deltas: written.deltas,
    looseRemoved,
    bytes: written.bytes,
    packsRemoved: merging.length,
  };
}

/** The commits the branches and `extraRefs` point at (a session's meta ref: as reachable as a branch). */
async function packTips(store: Store, gitdir: string, extraRefs: readonly string[]): Promise<Set<string>> {
  // Read only: a lock is never waited for, and never taken over.
  const refs = new RefStore(store, gitdir, { timeoutMs: 0, staleMs: Number.POSITIVE_INFINITY });
  const tips = new Set<string>();
  for (const ref of [...(await refs.branches()).map((name) => `refs/heads/${name}`), ...extraRefs]) {
    const oid = await refs.resolve(ref).catch(() => null);
    if (oid) tips.add(oid);
  }
  return tips;
}

/**
 * The commits the pack takes, oldest first along each tip's first parents (so a tree's base, its
 * path one turn earlier, is in the pack before it), each with its first parent.
 */
async function commitsToPack(
  objects: ObjectStore,
  tips: Set<string>,
  takes: TakesObject,
): Promise<{ oid: string; parent: string | null }[]> {
  const commits: { oid: string; parent: string | null }[] = [];
  const seen = new Set<string>();
  for (const tip of tips) {
    const chain: { oid: string; parent: string | null }[] = [];
    for (let sha: string | undefined = tip; sha && !seen.has(sha) && (await takes(sha)); ) {
      seen.add(sha);
      const c = parseCommit(await objects.readTyped(sha, 'commit'));
      chain.push({ oid: sha, parent: c.parents[0] ?? null });
      sha = c.parents[0];
    }
    commits.push(...chain.reverse());
  }
  return commits;
}

/** Add each commit, its trees (as deltas of its parent's at the same path) and blobs; the commit-graph's rows. */
async function addCommits(
  builder: PackBuilder,
  objects: ObjectStore,
  commits: { oid: string; parent: string | null }[],
  takes: TakesObject,
): Promise<GraphCommit[]> {
  // Per commit: its trees by path, to be the bases of the next commit's trees.
  const treesOf = new Map<string, Map<string, { oid: string; content: Uint8Array }>>();
  const graph: GraphCommit[] = [];
  for (const { oid, parent } of commits) {
    const content = await objects.readTyped(oid, 'commit');
    builder.add(oid, 'commit', content, null);
    const parsed = parseCommit(content);
    graph.push({ oid, tree: parsed.tree, parents: parsed.parents, time: parsed.time });
    const baseTrees = parent ? treesOf.get(parent) : undefined;
    const mine = new Map<string, { oid: string; content: Uint8Array }>();
    const walk = async (tree: string, path: string): Promise<void> => {
      if (builder.has(tree) || !(await takes(tree))) return;
      const bytes = await objects.readTyped(tree, 'tree');
      builder.add(tree, 'tree', bytes, baseTrees?.get(path) ?? null);
      mine.set(path, { oid: tree, content: bytes });
      for (const e of parseTree(bytes)) {
        if (e.mode === '40000') await walk(e.oid, `${path}${e.name}/`);
        else if (e.mode !== '160000' && !builder.has(e.oid) && (await takes(e.oid)))
          builder.add(e.oid, 'blob', await objects.readTyped(e.oid, 'blob'), null);
      }
    };
    await walk(parsed.tree, '');
    treesOf.set(oid, mine);
    if (parent) treesOf.delete(parent);
  }
  return graph;
}

/**
 * Remove the loose files of the objects the new pack holds; how many went. The fan-out
 * directories left empty go too, as `git prune-packed` removes them: on most file systems each
 * costs a block (4 KB), which 256 of them make a megabyte a repository.
 */
async function removePackedLoose(store: Store, gitdir: string, oids: string[]): Promise<number> {
  let removed = 0;
  const emptied = new Set<string>();
  for (const oid of oids)
    if (await store.remove(loosePath(gitdir, oid))) {
      removed++;
      emptied.add(oid.slice(0, 2));
    }
  for (const fan of emptied) await store.removeEmptyDir(joinPath(gitdir, 'objects', fan));
  return removed;
}

/**
 * The merged packs go, the index first (it is what makes a pack visible); what the new pack does
 * not hold is written loose before.
 */
async function retireMerged(
  store: Store,
  objects: ObjectStore,
  merging: { base: string; oids: string[] }[],
  written: { pack: string; oids: string[] },
): Promise<void> {
  const holds = new Set(written.oids);
  for (const pack of merging) {
    // The same objects in the same order make the same pack, under the same name: it stays.
    if (`${pack.base}.pack` === written.pack) continue;
    for (const oid of pack.oids) {
      if (holds.has(oid)) continue;
      const o = await objects.read(oid);
      await objects.write(o.type, o.content);
    }
    await store.remove(`${pack.base}.idx`);
    await store.remove(`${pack.base}.pack`);
    await store.remove(`${pack.base}.rev`);
  }
}
