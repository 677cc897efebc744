import { fromUtf8 } from '@entity-git/git';
import type { BranchPlan } from '../../model/derive.js';
import type { DagNode } from '../../model/types.js';
import { placeBySeq, type TurnCommit } from '../../search/search-walk.js';
import type { ExtendedBranch } from '../mirror.js';
import type { Known } from '../repo/state.js';

/**
 * The most message bytes a result carries for one branch. Past it the branch carries nothing and
 * a reader (the search index) reads the repository instead: a turn with a large tool output is
 * neither parsed a second time on the sync's path nor held by whoever keeps the result.
 */
export const CARRIED_BYTES = 1 << 20;

/**
 * What a branch moved from `from` gained, when `from` is one of its commits: the new turns'
 * message files, each with its node (parsed from the framed blob the sync wrote) and the turn that
 * brought it, by the rule a reader of the repository applies (`readRepositoryChanges`), so an
 * index fed from either holds the same. Null when `from` is not on the branch (it was committed
 * again), a new file's bytes are not among those this sync read, or they pass {@link CARRIED_BYTES}.
 */
export function extendedBranch(
  b: BranchPlan<Known>,
  commits: readonly string[],
  from: string,
  fresh: ReadonlyMap<string, Uint8Array>,
): ExtendedBranch | null {
  const at = commits.lastIndexOf(from);
  if (at < 0) return null;
  const walked: TurnCommit[] = [];
  for (let k = at + 1; k < commits.length; k++) {
    const t = b.turns[k]!;
    walked.push({ oid: commits[k]!, turn: t.index, seq: t.nodes.reduce((m, n) => Math.max(m, n.seq), 0) });
  }
  const messages: ExtendedBranch['messages'] = [];
  let bytes = 0;
  for (let k = at + 1; k < commits.length; k++) {
    for (const n of b.turns[k]!.nodes) {
      const framed = fresh.get(n.blob);
      if (framed === undefined) return null;
      bytes += framed.length;
      if (bytes > CARRIED_BYTES) return null;
      const node = JSON.parse(fromUtf8(framed.subarray(framed.indexOf(0) + 1))) as DagNode;
      const place = placeBySeq(walked, n.seq);
      messages.push({ blob: n.blob, node, turn: place.turn, commit: place.oid });
    }
  }
  return { name: b.name, from, tip: commits.at(-1)!, messages };
}
