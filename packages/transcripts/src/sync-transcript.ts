import { type BranchInfo, type DagNode, isEntityGitError, type Mirror, type SyncResult } from '@entity-git/core';
import type { ParsedSession } from './parsed-session.js';

/**
 * The seq from which the mirror must read a transcript's session again: the first node of the
 * last turn of each branch tip. A turn committed because its transcript was taken as finished
 * (a quiet time) may grow after all, and a node of it — a model response whose later records
 * arrive — then changes in place, which the mirror does not look for in nodes a commit holds.
 * Only such a turn can change: it was the last of its path when committed, and every sync since
 * read it again from here. Undefined when the session has no repository or branch yet, or when
 * the tips name no node of `parsed` (nothing to read again).
 */
export async function rereadFrom(mirror: Mirror, parsed: ParsedSession): Promise<number | undefined> {
  const id = parsed.session.id;
  let tips: BranchInfo[];
  try {
    tips = await mirror.branches(id);
  } catch (err) {
    if (isEntityGitError(err, 'SESSION_NOT_FOUND')) return undefined;
    throw err;
  }
  if (tips.length === 0) return undefined;
  const byId = new Map(parsed.nodes.map((n) => [n.id, n]));
  let from: number | undefined;
  for (const b of tips) {
    const { commits } = await mirror.log(id, { branch: b.name, page: { offset: 0, limit: 1 } });
    const last = commits[0]?.node;
    const start = last === null || last === undefined ? undefined : turnStart(byId, last);
    if (start !== undefined && (from === undefined || start < from)) from = start;
  }
  return from;
}

/**
 * The seq of the node that opens the turn holding `id`: its prompt (user node), found by going
 * from a tool result to its caller and from a node to its predecessor; the root for a first turn
 * without one. Predecessors come before their successors in every parser's seq order.
 */
function turnStart(byId: Map<string, DagNode>, id: string): number | undefined {
  let n = byId.get(id);
  if (n === undefined) return undefined;
  let seq = n.seq;
  // Bounded: a malformed chain cannot loop.
  for (let steps = 0; n !== undefined && steps <= byId.size; steps++) {
    seq = Math.min(seq, n.seq);
    if (n.role === 'user') break;
    // A tool result with a caller rides on its caller's step.
    const next: string | null = n.role === 'tool' && n.caller !== null ? n.caller : n.predecessor;
    n = next === null ? undefined : byId.get(next);
  }
  return seq;
}

/**
 * Syncs one session of a transcript whose newest parse the mirror's DAG serves, reading again
 * the last turns of its branch tips (see {@link rereadFrom}): a turn committed as finished that
 * has grown since is committed again, its branch moved to the new commit (the old one stays in
 * the reflog), and no branch holds two commits of one turn.
 */
export async function syncTranscript(mirror: Mirror, parsed: ParsedSession): Promise<SyncResult> {
  const reread = await rereadFrom(mirror, parsed);
  return mirror.sync(parsed.session.id, reread === undefined ? {} : { reread });
}
