import { compareBranches, cutTurns, rides, type BranchPlan, type Derivation, type NodeShape } from './derive.js';

/** A derivation extended by new nodes, and where the one branch they went to changed. */
export interface Extension<N extends NodeShape> {
  derivation: Derivation<N>;
  /** The branch before and after. */
  before: BranchPlan<N>;
  after: BranchPlan<N>;
  /** Turns `[0, keep)` of the branch are the same nodes as before. */
  keep: number;
}

/**
 * The common turn in constant time per new node instead of a derivation of the whole DAG: the
 * new nodes (every one newer than every known node, in seq order) only continue the leaf of one
 * branch — no fork, no new root, nothing riding on a node another branch shares. Returns the
 * derivation {@link derive} would give for the whole DAG, or null when the nodes do anything
 * else (the caller then derives from scratch).
 *
 * `byId` holds every node, old and new; `head` is the session's head now, `headBefore` the one
 * `previous` was derived with.
 */
export function extendDerivation<N extends NodeShape>(
  previous: Derivation<N>,
  {
    added,
    byId,
    head,
    headBefore,
  }: { added: readonly N[]; byId: ReadonlyMap<string, N>; head: string | null; headBefore: string | null },
): Extension<N> | null {
  if (added.length === 0 || previous.unknownHead !== undefined) return null;
  const fresh = new Set<string>();
  for (const n of added) fresh.add(n.id);

  // The non-riding node a node continues, through the riders between them; undefined when the
  // walk leaves what this fast path can see.
  const onChain = new Set<string>();
  const continues = (n: N): string | undefined => {
    for (let p = n.predecessor, steps = 0; p !== null; steps++) {
      const q = byId.get(p);
      if (q === undefined || steps > added.length + 1) return undefined;
      if (!rides(q)) return p;
      // A rider between them must already ride on this branch's chain.
      if (!fresh.has(p) && !onChain.has(q.caller!)) return undefined;
      p = q.predecessor;
    }
    return undefined; // a new root: a new branch
  };

  const first = added.find((n) => !rides(n));
  const leafId = first === undefined ? added[0]!.caller : findLeaf(previous, first, byId);
  if (leafId === null || leafId === undefined) return null;
  const index = previous.branches.findIndex((b) => b.leaf.id === leafId);
  if (index < 0) return null;
  const before = previous.branches[index]!;

  onChain.add(leafId);
  const reachable = new Set<string>([leafId]);
  let last = leafId;
  let prevSeq = -Infinity;
  for (const n of added) {
    if (n.seq <= prevSeq) return null;
    prevSeq = n.seq;
    if (rides(n)) {
      if (
        !onChain.has(n.caller!) ||
        n.predecessor === null ||
        !(reachable.has(n.predecessor) || riderOfChain(byId.get(n.predecessor), onChain))
      )
        return null;
    } else {
      if (continues(n) !== last) return null;
      last = n.id;
      onChain.add(n.id);
    }
    reachable.add(n.id);
  }

  const lastTurn = before.turns.at(-1);
  if (lastTurn === undefined) return null;
  const recut = cutTurns([...lastTurn.nodes, ...added]).map((t, i) => ({ index: lastTurn.index + i, nodes: t.nodes }));
  const turns = [...before.turns.slice(0, -1), ...recut];
  const complete = turns.at(-1)!.nodes.some((n) => n.pending) ? turns.length - 1 : turns.length;
  const keep = recut[0]!.nodes.length > lastTurn.nodes.length ? before.turns.length - 1 : before.turns.length;
  const after: BranchPlan<N> = { name: before.name, leaf: byId.get(last)!, turns, complete };

  let headBranch = previous.head;
  if (head !== headBefore) {
    if (head === null || !fresh.has(head)) return null;
    headBranch = before.name;
  } else if (head === null && first !== undefined) {
    headBranch = before.name; // HEAD follows the newest leaf, which is now this one
  }
  const branches = previous.branches.map((b) => (b === before ? after : b)).sort(compareBranches);
  return { derivation: { branches, head: headBranch }, before, after, keep };
}

/** The leaf the first new non-riding node continues, when its predecessors are all in view. */
function findLeaf<N extends NodeShape>(
  previous: Derivation<N>,
  first: N,
  byId: ReadonlyMap<string, N>,
): string | undefined {
  const leaves = new Set(previous.branches.map((b) => b.leaf.id));
  for (let p = first.predecessor, steps = 0; p !== null && steps <= byId.size; steps++) {
    const q = byId.get(p);
    if (q === undefined) return undefined;
    if (!rides(q)) return leaves.has(p) ? p : undefined;
    p = q.predecessor;
  }
  return undefined;
}

/** An old rider whose caller is on the chain being extended (so it is on the branch already). */
function riderOfChain<N extends NodeShape>(n: N | undefined, onChain: Set<string>): boolean {
  return n !== undefined && rides(n) && onChain.has(n.caller!);
}
