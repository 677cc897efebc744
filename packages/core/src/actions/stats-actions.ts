// `session_stats`: tokens and cost per turn, per branch and for the session (docs/design.md,
// 'Retention and accounting'). Counted from the DAG's rows with the derivation the mirror commits
// (so turn k of a branch here is turn k of that branch's commits), never from the repository.
import { EntityGitError } from '@entity-git/git';
import type { DagSource } from '../dag/dag-source.js';
import type { Mirror } from '../mirror/mirror.js';
import { defaultMetadataKeys, type MetadataKeys } from '../model/commit-message.js';
import { derive, type NodeShape } from '../model/derive.js';
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

/** A running sum that stays null until something reports a figure (a source that records none shows none). */
class Sum {
  #value: number | null = null;
  add(v: number | null): void {
    if (v !== null) this.#value = (this.#value ?? 0) + v;
  }
  get value(): number | null {
    return this.#value;
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
  const keys = { ...defaultMetadataKeys, ...options.metadataKeys };
  const session = await requireSession(dag, sessionId);
  const nodes: Counted[] = [];
  for await (const n of dag.nodesAfter(sessionId, 0))
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
  const head = dag.getHead ? await dag.getHead(sessionId) : session.head;
  const derived = derive(nodes, head);
  const tokens = new Sum();
  const cost = new Sum();
  const counted = new Set<string>();
  for (const b of derived.branches)
    for (const t of b.turns)
      for (const n of t.nodes) {
        if (counted.has(n.id)) continue;
        counted.add(n.id);
        tokens.add(n.tokens);
        cost.add(n.cost);
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
    const commits = await committedTurns(mirror, sessionId, plan.name);
    const bTokens = new Sum();
    const bCost = new Sum();
    const turns = plan.turns.map((t): StatsTurn => {
      const tTokens = new Sum();
      const tCost = new Sum();
      for (const n of t.nodes) {
        tTokens.add(n.tokens);
        tCost.add(n.cost);
      }
      bTokens.add(tTokens.value);
      bCost.add(tCost.value);
      const last = t.nodes.at(-1)!;
      const sha = commits.get(t.index);
      return {
        turn: t.index,
        node: last.id,
        seq: last.seq,
        complete: t.index <= plan.complete,
        commit: sha !== undefined && sha.node === last.id ? sha.sha : null,
        tokens: tTokens.value,
        cost: tCost.value,
      };
    });
    branches.push({
      name: plan.name,
      head: plan.name === derived.head,
      turns,
      tokens: bTokens.value,
      cost: bCost.value,
    });
  }
  // The order `git_branches` lists them in: main, then by name.
  branches.sort((a, b) =>
    a.name === 'main' ? -1 : b.name === 'main' ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  return { session_id: sessionId, branches, tokens: tokens.value, cost: cost.value };
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
