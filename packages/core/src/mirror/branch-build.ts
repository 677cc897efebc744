import type { TreeEntry } from '@entity-git/git';
import type { BranchPlan } from '../model/derive.js';
import { shardOf } from './layout.js';
import type { Layout } from './mirror.js';
import type { Known } from './repo/state.js';

/** A branch's commit per complete turn and the messages of its tip, as they were built. */
export interface BranchBuild {
  commits: string[];
  /** Every message file of the tip, in the order the turns added them. */
  entries: TreeEntry[];
  /** Sharded: the same files by shard, and each shard's tree with the entry count it was built at. */
  shards: Map<string, TreeEntry[]>;
  built: Map<string, { count: number; oid: string }>;
  /** Entries already checked for a blob still to write. */
  checked: number;
  /** Flat: the bytes of the last messages tree built, and how many entries it holds. */
  flat: { bytes: Uint8Array; count: number } | null;
}
export const newBuild = (): BranchBuild => ({
  commits: [],
  entries: [],
  shards: new Map(),
  built: new Map(),
  checked: 0,
  flat: null,
});

/** Take a build back to its first `keep` turns (`b` is the plan it was built for). */
export function trimBuild(build: BranchBuild, layout: Layout, b: BranchPlan<Known>, keep: number): void {
  for (let k = build.commits.length - 1; k >= keep; k--) {
    const nodes = b.turns[k]!.nodes;
    for (let i = nodes.length - 1; i >= 0; i--) {
      build.entries.pop();
      if (layout === 'sharded') {
        const shard = shardOf(nodes[i]!.seq);
        const files = build.shards.get(shard)!;
        files.pop();
        if (files.length === 0) build.shards.delete(shard);
        build.built.delete(shard);
      }
    }
  }
  build.commits.length = keep;
  build.checked = Math.min(build.checked, build.entries.length);
  build.flat = null;
}
