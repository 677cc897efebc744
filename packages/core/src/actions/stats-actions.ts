// `session_stats`: tokens and cost per turn, per branch and for the session (docs/design.md,
// 'Retention and accounting'). Counted from the DAG's rows with the derivation the mirror commits
// (so turn k of a branch here is turn k of that branch's commits), never from the repository.
import { EntityGitError } from '@entity-git/git';
import type { DagSource } from '../dag/dag-source.js';
import type { Mirror } from '../mirror/mirror.js';
import { defaultMetadataKeys, type MetadataKeys } from '../model/commit-message.js';
import { derive, type BranchPlan, type NodeShape } from '../model/derive.js';
import type { SessionStats, StatsBranch, StatsTurn } from './action-types.js';
import type { Handlers } from './handlers.js';
import { idParam, optionalString, paramsObject, requireSession } from './params.js';

export interface StatsActionsOptions {
  dag: DagSource;
  mirror: Mirror;
  /** Where tokens and cost are read (the mirror's `metadataKeys`: give the same). Default `defaultMetadataKeys`. */
  metadataKeys?: Partial<MetadataKeys>;
}

/** A node as the accounting needs it. */
interface Counted extends NodeShape {
  tokens: number | null;
  cost: number | null;
}

/** Running sums of tokens and cost that stay null until something reports a figure (a source that records none shows none). */
class Figures {
  tokens: number | null = null;
  cost: number | null = null;
  add(x: { tokens: number | null; cost: number | null }): this {
    if (x.tokens !== null) this.tokens = (this.tokens ?? 0) + x.tokens;
    if (x.cost !== null) this.cost = (this.cost ?? 0) + x.cost;
    return this;
  }
}

export function statsActions(options: StatsActionsOptions): Handlers<'session_stats'> {
  return {
    async session_stats(params) {
      const p = paramsObject(params);
      const sessionId = idParam(p, 'session_id');
      const branch = optionalString(p, 'branch');
      return sessionStats(options, sessionId, branch);
    },
  };
}

/**
 * The accounting of one session: every branch the DAG derives (or `branch` alone), each turn's
 * own nodes summed, each branch's turns summed, and the session's distinct nodes summed once
 * (a turn shared by several branches counts once in the session's total). Throws
 * `SESSION_NOT_FOUND`, `BRANCH_NOT_FOUND` and the DAG's own codes.
 */
export async function sessionStats(
  options: StatsActionsOptions,
  sessionId: string,
  branch?: string,
): Promise<SessionStats> {
  const { dag, mirror } = options;
  const session = await requireSession(dag, sessionId);
  const nodes = await countedNodes(options, sessionId);
  const derived = derive(nodes, dag.getHead ? await dag.getHead(sessionId) : session.head);
  const total = new Figures();
  const counted = new Set<string>();
  for (const b of derived.branches)
    for (const t of b.turns)
      for (const n of t.nodes) {
        if (counted.has(n.id)) continue;
        counted.add(n.id);
        total.add(n);
      }
  const plans = branch === undefined ? derived.branches : derived.branches.filter((b) => b.name === branch);
  if (plans.length === 0 && branch !== undefined)
    throw new EntityGitError(
      'BRANCH_NOT_FOUND',
      `session ${JSON.stringify(sessionId)} has no branch ${JSON.stringify(branch)}`,
      { sessionId, branch },
    );
  const branches: StatsBranch[] = [];
  for (const plan of plans) {
    const turns = turnStats(plan, await committedTurns(mirror, sessionId, plan.name));
    const sum = turns.reduce((f, t) => f.add(t), new Figures());
    branches.push({ name: plan.name, head: plan.name === derived.head, turns, tokens: sum.tokens, cost: sum.cost });
  }
  // The order `git_branches` lists them in: main, then by name.
  branches.sort((a, b) =>
    a.name === 'main' ? -1 : b.name === 'main' ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  return { session_id: sessionId, branches, tokens: total.tokens, cost: total.cost };
}

/** The session's nodes as the accounting needs them, read through the metadata keys. */
async function countedNodes(options: StatsActionsOptions, sessionId: string): Promise<Counted[]> {
  const keys = { ...defaultMetadataKeys, ...options.metadataKeys };
  const nodes: Counted[] = [];
  for await (const n of options.dag.nodesAfter(sessionId, 0))
    nodes.push({
      id: n.id,
      seq: n.seq,
      role: n.role,
      predecessor: n.predecessor,
      caller: n.caller,
      pending: keys.pending(n),
      tokens: keys.tokens(n),
      cost: keys.cost(n),
    });
  return nodes;
}

/** Each turn of a branch with its own nodes' sums, and its commit where the repository holds the turn as derived. */
function turnStats(plan: BranchPlan<Counted>, commits: Map<number, { sha: string; node: string | null }>): StatsTurn[] {
  return plan.turns.map((t) => {
    const sum = t.nodes.reduce((f, n) => f.add(n), new Figures());
    const last = t.nodes.at(-1)!;
    const c = commits.get(t.index);
    return {
      turn: t.index,
      node: last.id,
      seq: last.seq,
      complete: t.index <= plan.complete,
      commit: c !== undefined && c.node === last.id ? c.sha : null,
      tokens: sum.tokens,
      cost: sum.cost,
    };
  });
}

/** The branch's commits by turn, with the node their trailers name; none before the first sync. */
async function committedTurns(
  mirror: Mirror,
  sessionId: string,
  branch: string,
): Promise<Map<number, { sha: string; node: string | null }>> {
  const byTurn = new Map<number, { sha: string; node: string | null }>();
  const log = await mirror.log(sessionId, { branch }).catch(() => []);
  for (const c of log) if (c.turn !== null) byTurn.set(c.turn, { sha: c.sha, node: c.node });
  return byTurn;
}
