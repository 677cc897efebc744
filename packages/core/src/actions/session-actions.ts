// The session actions: a session's timeline and branches from the mirror, the read-only view of
// one commit, the DAG head moved to a branch, the sessions listed, and one turn's messages.
import { EntityGitError } from '@entity-git/git';
import type { DagSource, DagWriter } from '../dag/dag-source.js';
import type { CommitInfo, Mirror } from '../mirror/mirror.js';
import type { DagNode } from '../model/types.js';
import type { SessionSummary, TimelineCommit } from './action-types.js';
import type { Handlers } from './handlers.js';
import {
  idParam,
  intParam,
  invalidArgument,
  optionalString,
  paramsObject,
  requireSession,
  shaParam,
} from './params.js';

export interface SessionActionsOptions {
  dag: DagSource;
  mirror: Mirror;
  /** Needed by `git_switch_branch` (it moves the DAG head). */
  writer?: Pick<DagWriter, 'setHead'>;
}

type SessionActionName =
  | 'git_history'
  | 'git_session_log'
  | 'git_checkout'
  | 'git_session_checkout'
  | 'git_branches'
  | 'git_switch_branch'
  | 'list_sessions'
  | 'turn_messages';

/** A session as lists show it, with its mirrored head branch; null when the DAG has no such session. */
export async function sessionSummary(
  { dag, mirror }: Pick<SessionActionsOptions, 'dag' | 'mirror'>,
  sessionId: string,
): Promise<SessionSummary | null> {
  const s = await dag.getSession(sessionId);
  if (s === null) return null;
  const head = await mirror.branches(sessionId).then(
    (bs) => bs.find((b) => b.head) ?? null,
    () => null,
  );
  return {
    id: s.id,
    title: s.title,
    model: s.model,
    project_id: s.project_id,
    created_at: s.created_at,
    branch: head?.name ?? null,
    turns: head?.turns ?? 0,
  };
}

const branchesOf = async (mirror: Mirror, sessionId: string) =>
  (await mirror.branches(sessionId)).map((b) => ({ name: b.name, commit: b.commit, turns: b.turns, head: b.head }));

/** A commit of `Mirror.log` as the timeline of `git_history` shows it. */
export function timelineCommit(c: CommitInfo): TimelineCommit {
  return { sha: c.sha, parents: c.parents, turn: c.turn, subject: c.subject, time: c.time, node: c.node, seq: c.seq };
}

export function sessionActions(options: SessionActionsOptions): Handlers<SessionActionName> {
  const { dag, mirror } = options;
  const history = async (params: unknown) => {
    const p = paramsObject(params);
    const sessionId = idParam(p, 'session_id');
    const branch = optionalString(p, 'branch');
    await requireSession(dag, sessionId);
    const branches = await mirror.branches(sessionId).catch(() => []);
    const name = branch ?? branches.find((b) => b.head)?.name ?? null;
    const log = name === null ? [] : await mirror.log(sessionId, { branch: name });
    return { session_id: sessionId, branch: name, commits: log.map(timelineCommit) };
  };

  const checkout = async (params: unknown) => {
    const p = paramsObject(params);
    const sessionId = idParam(p, 'session_id');
    const sha = shaParam(p, 'commit_sha');
    const branch = optionalString(p, 'branch');
    await requireSession(dag, sessionId);
    const view = await mirror.read(sessionId, sha, branch === undefined ? {} : { branch });
    const last = view.messages.at(-1);
    return {
      session_id: sessionId,
      commit: view.commit,
      branch: view.branch,
      turn: view.turn,
      turns: view.turns,
      prev: view.prev,
      next: view.next,
      messages: view.messages,
      meta: view.meta,
      continue_from: last?.id ?? null,
    };
  };

  return {
    git_history: history,
    git_session_log: history,
    git_checkout: checkout,
    git_session_checkout: checkout,
    async git_branches(params) {
      const sessionId = idParam(paramsObject(params), 'session_id');
      await requireSession(dag, sessionId);
      return { session_id: sessionId, branches: await branchesOf(mirror, sessionId) };
    },
    git_switch_branch: (params) => switchBranch(options, params),
    async list_sessions() {
      const sessions: SessionSummary[] = [];
      for (const id of await dag.listSessions()) {
        const s = await sessionSummary(options, id);
        if (s) sessions.push(s);
      }
      return { sessions };
    },
    turn_messages: (params) => turnMessages(dag, params),
  };
}

/** `turn_messages`: the messages of the path to `to_node`, from the DAG's nodes in the seq range. */
async function turnMessages(dag: DagSource, params: unknown) {
  const p = paramsObject(params);
  const sessionId = idParam(p, 'session_id');
  const toNode = idParam(p, 'to_node');
  const toSeq = intParam(p, 'to_seq', { fallback: -1, min: 1 });
  const fromSeq = intParam(p, 'from_seq', { fallback: 0, min: 0 });
  if (toSeq < 0) invalidArgument('to_seq must be given', { param: 'to_seq' });
  await requireSession(dag, sessionId);
  // Nodes of other branches may share the seq range: keep the range, then walk the path back.
  const range = new Map<string, DagNode>();
  for await (const n of dag.nodesAfter(sessionId, fromSeq)) {
    if (n.seq > toSeq) break;
    range.set(n.id, n);
  }
  if (!range.has(toNode))
    throw new EntityGitError(
      'NODE_NOT_FOUND',
      `session ${JSON.stringify(sessionId)} has no node ${JSON.stringify(toNode)} at seq ${toSeq}`,
      { sessionId, nodeId: toNode },
    );
  // The path as the mirror derives it (model/derive.ts, `rides`): the predecessor chain, plus the tool
  // results riding on a node of it (their caller), in seq order.
  const chain = new Set<string>();
  for (let n = range.get(toNode); n !== undefined; n = n.predecessor === null ? undefined : range.get(n.predecessor))
    chain.add(n.id);
  const messages = [...range.values()].filter(
    (n) => chain.has(n.id) || (n.role === 'tool' && n.caller !== null && chain.has(n.caller)),
  );
  return { session_id: sessionId, messages: messages.sort((a, b) => a.seq - b.seq) };
}

/** `git_switch_branch`: the DAG head moved to the branch's tip node, then the session synced. */
async function switchBranch(options: SessionActionsOptions, params: unknown) {
  const { dag, mirror } = options;
  const p = paramsObject(params);
  const sessionId = idParam(p, 'session_id');
  const branch =
    optionalString(p, 'branch') ?? invalidArgument('branch must be a non-empty string', { param: 'branch' });
  await requireSession(dag, sessionId);
  const writer = options.writer ?? invalidArgument('this server cannot write the DAG (no writer)');
  const target = (await mirror.branches(sessionId)).find((b) => b.name === branch);
  if (!target)
    throw new EntityGitError(
      'BRANCH_NOT_FOUND',
      `session ${JSON.stringify(sessionId)} has no branch ${JSON.stringify(branch)}`,
      { sessionId, branch },
    );
  const tip = (await mirror.log(sessionId, { branch }))[0];
  if (!tip?.node)
    throw new EntityGitError('BRANCH_NOT_FOUND', `branch ${branch} has no mirrored turn`, { sessionId, branch });
  await writer.setHead(sessionId, tip.node);
  await mirror.sync(sessionId);
  return { session_id: sessionId, head_node: tip.node, branches: await branchesOf(mirror, sessionId) };
}
