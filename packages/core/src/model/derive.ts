import { EntityGitError } from '@entity-git/git';
import { idSegment } from './names.js';
import type { Role } from './types.js';

/** What derivation needs of a node: its edges, role, order and whether it is still being filled. */
export interface NodeShape {
  id: string;
  seq: number;
  role: Role;
  predecessor: string | null;
  caller: string | null;
  pending: boolean;
}

export interface TurnPlan<N extends NodeShape = NodeShape> {
  /** 1-based position on the path. */
  index: number;
  /** The turn's nodes in seq order. */
  nodes: N[];
}

export interface BranchPlan<N extends NodeShape = NodeShape> {
  /** `main`, `retry-<id>` or `fork-<id>` (ids as {@link idSegment}). */
  name: string;
  leaf: N;
  /** Every turn of the leaf's path, complete or not. */
  turns: TurnPlan<N>[];
  /** How many leading turns are complete and get a commit. */
  complete: number;
}

export interface Derivation<N extends NodeShape = NodeShape> {
  branches: BranchPlan<N>[];
  /** The branch HEAD names: the branch of the session's head. Null for an empty session. */
  head: string | null;
  /** Set when the session's head names no node of the DAG (HEAD then follows the newest leaf). */
  unknownHead?: string;
}

/** A tool result with a caller rides on its caller's path and never forks or ends a path. */
export const rides = (n: NodeShape): boolean => n.role === 'tool' && n.caller !== null;

/**
 * Turns, paths and branches as a pure function of the DAG (docs/design.md, 'Turns, commits and branches'). Throws
 * `DAG_DUPLICATE_ID`, `DAG_DUPLICATE_SEQ`, `DAG_MISSING_PREDECESSOR` or `DAG_CYCLE`.
 */
export function derive<N extends NodeShape>(nodes: readonly N[], head: string | null): Derivation<N> {
  const steps = deriveSteps(nodes, head);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Nodes handled between two of {@link deriveSteps}' pauses. */
const STEP = 256;

/**
 * {@link derive} in steps: a generator that pauses (`yield`) every {@link STEP} nodes of each
 * pass and after each branch, so a caller can give the host a turn while a long DAG is derived
 * (a long session's derivation in one piece would hold the host's event loop). Returns what `derive` returns.
 */
export function* deriveSteps<N extends NodeShape>(
  nodes: readonly N[],
  head: string | null,
): Generator<void, Derivation<N>, void> {
  const dag = yield* indexSteps(nodes);
  const branches: BranchPlan<N>[] = [];
  const branchOfLeaf = new Map<string, string>();
  const reached = new Set<string>();
  for (const leaf of dag.leaves) {
    const branch = yield* branchSteps(dag, leaf, reached);
    branches.push(branch);
    branchOfLeaf.set(leaf.id, branch.name);
  }

  yield;
  // A node on no leaf's chain can only sit on a predecessor loop (every other node leads to a leaf).
  const stranded = dag.sorted.find((n) => !rides(n) && !reached.has(n.id));
  if (stranded) {
    throw new EntityGitError('DAG_CYCLE', `node ${JSON.stringify(stranded.id)} is on a predecessor cycle`, {
      nodeId: stranded.id,
    });
  }
  const unknownHead = dag.leaves.length > 0 && head !== null && !dag.byId.has(head) ? head : undefined;
  const headBranch = dag.leaves.length > 0 ? branchOfLeaf.get(headLeaf(dag, head).id)! : null;
  branches.sort(compareBranches);
  return unknownHead === undefined ? { branches, head: headBranch } : { branches, head: headBranch, unknownHead };
}

/** The DAG as {@link deriveSteps}' passes read it, and the count of nodes they have handled. */
interface DagIndex<N extends NodeShape> {
  readonly byId: Map<string, N>;
  /** Every node, in seq order. */
  readonly sorted: readonly N[];
  /** Each node's fork children, in seq order ('' stands for "no predecessor": the roots). */
  readonly children: Map<string, N[]>;
  /** The tool results riding on each caller, in seq order. */
  readonly riders: Map<string, N[]>;
  readonly leaves: readonly N[];
  /** Nodes handled so far over every pass: a pause at each multiple of {@link STEP}. */
  step: number;
}

/** The first passes: ids and seqs checked unique, edges checked to name nodes, fork children and leaves. */
function* indexSteps<N extends NodeShape>(nodes: readonly N[]): Generator<void, DagIndex<N>, void> {
  const byId = new Map<string, N>();
  const seqs = new Set<number>();
  let step = 0;
  for (const n of nodes) {
    if (++step % STEP === 0) yield;
    if (byId.has(n.id))
      throw new EntityGitError('DAG_DUPLICATE_ID', `node id ${JSON.stringify(n.id)} appears twice`, { nodeId: n.id });
    if (seqs.has(n.seq)) throw new EntityGitError('DAG_DUPLICATE_SEQ', `seq ${n.seq} appears twice`, { seq: n.seq });
    byId.set(n.id, n);
    seqs.add(n.seq);
  }
  yield;
  const sorted = yield* bySeq(nodes);
  for (const n of sorted) {
    if (++step % STEP === 0) yield;
    for (const [edge, target] of [
      ['predecessor', n.predecessor],
      ['caller', n.caller],
    ] as const) {
      if (target !== null && !byId.has(target)) {
        throw new EntityGitError(
          'DAG_MISSING_PREDECESSOR',
          `node ${JSON.stringify(n.id)} has ${edge} ${JSON.stringify(target)}, which is not in the DAG`,
          { nodeId: n.id, [edge]: target },
        );
      }
    }
  }
  // Fork children: the non-riding nodes under a node once the tool results between them are
  // skipped (an assistant's next reply usually follows its last tool result, yet it continues
  // the assistant's step, not a branch of the tool's). '' stands for "no predecessor" (roots).
  const children = new Map<string, N[]>();
  const riders = new Map<string, N[]>();
  for (const n of sorted) {
    if (++step % STEP === 0) yield;
    if (rides(n)) push(riders, n.caller!, n);
    else push(children, forkParent(n, byId, sorted.length), n);
  }
  const leaves = sorted.filter((n) => !rides(n) && !children.has(n.id));
  if (sorted.some((n) => !rides(n)) && leaves.length === 0) {
    throw new EntityGitError('DAG_CYCLE', 'the DAG has no leaf: its predecessor edges form a cycle');
  }
  return { byId, sorted, children, riders, leaves, step };
}

/** The branch of `leaf`: its name, its path cut into turns, how many are complete; its chain added to `reached`. */
function* branchSteps<N extends NodeShape>(
  dag: DagIndex<N>,
  leaf: N,
  reached: Set<string>,
): Generator<void, BranchPlan<N>, void> {
  const { byId, sorted, children, riders } = dag;
  let step = dag.step;
  yield;
  const chain = chainOf(leaf, byId, sorted.length);
  yield;
  for (const c of chain) {
    if (++step % STEP === 0) yield;
    reached.add(c.id);
  }
  let deviation: N | null = null;
  for (const c of chain) {
    if (++step % STEP === 0) yield;
    if (rides(c)) continue;
    const siblings = children.get(forkParent(c, byId, sorted.length))!;
    if (siblings.length > 1 && siblings[0] !== c) deviation = c;
  }
  const name =
    deviation === null ? 'main' : `${deviation.role === 'assistant' ? 'retry' : 'fork'}-${idSegment(deviation.id)}`;
  const onPath = new Set<N>(chain);
  yield;
  for (const c of chain) {
    if (++step % STEP === 0) yield;
    for (const r of riders.get(c.id) ?? []) onPath.add(r);
  }
  dag.step = step;
  yield;
  const path = yield* bySeq([...onPath]);
  const turns = yield* cutTurnSteps(path);
  const last = turns.at(-1);
  const complete = last?.nodes.some((n) => n.pending) ? turns.length - 1 : turns.length;
  return { name, leaf, turns, complete };
}

/**
 * The leaf whose branch HEAD names: from the session's head (a tool result's caller for a tool
 * result) down the lowest-seq fork child; the newest leaf when there is no head or it is unknown.
 */
function headLeaf<N extends NodeShape>(dag: DagIndex<N>, head: string | null): N {
  let start = head === null ? undefined : dag.byId.get(head);
  if (start && rides(start)) start = dag.byId.get(start.caller!);
  if (start === undefined) return dag.leaves.reduce((a, b) => (b.seq > a.seq ? b : a));
  let leaf = start;
  for (let kids = dag.children.get(leaf.id); kids; kids = dag.children.get(leaf.id)) leaf = kids[0]!;
  return leaf;
}

/**
 * `list` in seq order, in steps: itself when it is so already (sources list nodes by seq, and a
 * chain mostly is: checked, not assumed), else a sorted copy.
 */
function* bySeq<N extends NodeShape>(list: readonly N[]): Generator<void, readonly N[], void> {
  for (let i = 1; i < list.length; i++) {
    if (i % STEP === 0) yield;
    if (list[i - 1]!.seq > list[i]!.seq) {
      yield;
      return [...list].sort((a, b) => a.seq - b.seq);
    }
  }
  return list;
}

/** The order of {@link Derivation.branches}: `main` first, then by the seq of the leaf. */
export function compareBranches(a: BranchPlan, b: BranchPlan): number {
  return a.name === 'main' ? -1 : b.name === 'main' ? 1 : a.leaf.seq - b.leaf.seq;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The nearest predecessor that does not ride on a caller ('' at a root). */
function forkParent<N extends NodeShape>(n: N, byId: Map<string, N>, limit: number): string {
  let p = n.predecessor === null ? undefined : byId.get(n.predecessor);
  for (let steps = 0; p !== undefined && rides(p); steps++) {
    if (steps > limit)
      throw new EntityGitError('DAG_CYCLE', `the predecessor chain of ${JSON.stringify(n.id)} loops`, { nodeId: n.id });
    p = p.predecessor === null ? undefined : byId.get(p.predecessor);
  }
  return p?.id ?? '';
}

/** The predecessor chain from the root to `leaf`. */
function chainOf<N extends NodeShape>(leaf: N, byId: Map<string, N>, limit: number): N[] {
  const chain: N[] = [];
  for (let n: N | undefined = leaf; n; n = n.predecessor === null ? undefined : byId.get(n.predecessor)) {
    chain.push(n);
    if (chain.length > limit) {
      throw new EntityGitError('DAG_CYCLE', `the predecessor chain of ${JSON.stringify(leaf.id)} loops`, {
        nodeId: leaf.id,
      });
    }
  }
  return chain.reverse();
}

/** Cut a path into turns at its user nodes; nodes before the first user node join turn 1. */
export function cutTurns<N extends NodeShape>(path: readonly N[]): TurnPlan<N>[] {
  const steps = cutTurnSteps(path);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** {@link cutTurns} in steps: a pause every {@link STEP} nodes. */
function* cutTurnSteps<N extends NodeShape>(path: readonly N[]): Generator<void, TurnPlan<N>[], void> {
  const turns: TurnPlan<N>[] = [];
  let current: N[] = [];
  let hasUser = false;
  let step = 0;
  for (const n of path) {
    if (++step % STEP === 0) yield;
    if (n.role === 'user' && hasUser) {
      turns.push({ index: turns.length + 1, nodes: current });
      current = [];
      hasUser = false;
    }
    if (n.role === 'user') hasUser = true;
    current.push(n);
  }
  if (current.length > 0) turns.push({ index: turns.length + 1, nodes: current });
  return turns;
}
