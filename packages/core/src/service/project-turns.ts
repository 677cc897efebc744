import type { DagSource } from '../dag/dag-source.js';
import type { CommitInfo, SyncResult } from '../mirror/mirror.js';
import { type NodeShape, rides } from '../model/derive.js';
import { textOf } from '../model/text.js';
import type { DagNode } from '../model/types.js';
import type { ProjectSnapshot } from '../project-seam.js';
import type { MirrorServiceOptions, ServiceEventName, ServiceEvents } from './service-types.js';

/** A session node as `notify` saw it: the turn a report is about. */
export interface Mark {
  node: string;
  seq: number;
}

/** A turn report as queued: its own turn identity, captured when `notify` was called. */
export interface Queued {
  touchedPaths: readonly string[];
  writtenBlobs: Readonly<Record<string, string | null>> | undefined;
  snapshot: ProjectSnapshot | null;
  node: string | null;
  /** The session's newest node at `notify` time (null without a `dag`, or when it cannot be read). */
  mark: Promise<Mark | null>;
}

/** The session branches read by one run, shared by its reports (the repository does not move meanwhile). */
export interface RunLogs {
  logs: Map<string, CommitInfo[]>;
  /** The other branches than HEAD's, once asked for. */
  branches: string[] | null;
}

/** A session's turn reports, kept until each has had its project auto-commit. */
export interface Reports {
  turns: Queued[];
  /** Reports ever done with: with those still queued, every report made (`beforeTurn` waits on it). */
  handled: number;
  /** Woken whenever a report is done or the session's state changes. */
  waiters: Set<() => void>;
  /** The newest node any capture has seen: the next capture reads only what follows it. */
  seen: Mark | null;
}

export const wake = (slot: Reports) => {
  for (const w of [...slot.waiters]) w();
};

/**
 * Until the reports queued before `target` are done, the session stops running (its `state` is
 * no longer queued or running), or `waitMs` has passed.
 */
export async function reportsDone(slot: Reports, target: number, state: () => string, waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs;
  while (slot.handled < target && (state() === 'queued' || state() === 'running')) {
    const left = deadline - Date.now();
    if (left <= 0) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer as Parameters<typeof clearTimeout>[0]);
        slot.waiters.delete(done);
        resolve();
      };
      const timer: unknown = setTimeout(done, left);
      slot.waiters.add(done);
    });
  }
}

/**
 * The session's newest node, read from now on (a source that answers at once sees the DAG as of
 * the `notify` call). Reads only the nodes after the newest one seen before; never rejects.
 */
export function capture(dag: DagSource | undefined, sessionId: string, slot: Reports): Promise<Mark | null> {
  if (!dag) return Promise.resolve(null);
  try {
    const from = slot.seen;
    const it = dag.nodesAfter(sessionId, from?.seq ?? 0)[Symbol.asyncIterator]();
    const first = it.next();
    return (async () => {
      let best = from;
      for (let r = await first; !r.done; r = await it.next()) {
        if (best === null || r.value.seq > best.seq) best = { node: r.value.id, seq: r.value.seq };
      }
      if (best !== null && (slot.seen === null || best.seq > slot.seen.seq)) slot.seen = best;
      return best;
    })().catch(() => null);
  } catch {
    return Promise.resolve(null);
  }
}

/** A session commit, and the commit before it on the branch it was found on (null at turn 1). */
export interface TurnCommit {
  commit: CommitInfo;
  parent: CommitInfo | null;
}

/**
 * The session commit of a reported turn, from the sync that just ran: the commit whose `Node:`
 * trailer names the report's node (HEAD's branch first, then the others); else the newest commit
 * of HEAD's branch at or before the node `notify` saw (the next turn had begun); else HEAD's tip.
 */
export async function sessionCommitOf(
  mirror: MirrorServiceOptions['mirror'],
  { sessionId, report, result, seen }: ReportedTurn,
): Promise<TurnCommit | undefined> {
  const logOf = async (branch: string) => {
    let log = seen.logs.get(branch);
    if (!log) seen.logs.set(branch, (log = await mirror.log(sessionId, { branch })));
    return log;
  };
  const at = (log: CommitInfo[], i: number): TurnCommit | undefined =>
    i < 0 ? undefined : { commit: log[i]!, parent: log[i + 1] ?? null };
  const mark = await report.mark;
  const node = report.node ?? mark?.node ?? null;
  const head = result.head === null ? [] : await logOf(result.head);
  if (node !== null) {
    const found = at(
      head,
      head.findIndex((c) => c.node === node),
    );
    if (found) return found;
    seen.branches ??= (await mirror.branches(sessionId)).map((b) => b.name).filter((b) => b !== result.head);
    for (const b of seen.branches) {
      const log = await logOf(b);
      const hit = at(
        log,
        log.findIndex((c) => c.node === node),
      );
      if (hit) return hit;
    }
  }
  if (mark !== null) {
    const before = at(
      head,
      head.findIndex((c) => c.seq !== null && c.seq <= mark.seq),
    );
    if (before) return before;
  }
  return at(head, head.length > 0 ? 0 : -1);
}

type Edges = NodeShape & Pick<DagNode, 'content'>;

/**
 * The user message of the turn a session commit holds, as the DAG has it: the text of the turn's
 * user node (`textOf` its content, the text the commit's subject was cut from), found by walking
 * back from the turn's last node (the `Node:` trailer). Read from the DAG source, only the nodes
 * after the previous turn's last one; without a source (or when the DAG no longer holds the node)
 * from the messages the commit holds. '' for a turn with no user node.
 */
export async function userMessageOf(
  options: Pick<MirrorServiceOptions, 'mirror' | 'dag'>,
  sessionId: string,
  tip: TurnCommit,
): Promise<string> {
  const { commit, parent } = tip;
  if (commit.node === null) return '';
  const last = commit.node;
  const nodes = new Map<string, Edges>();
  const keep = (n: DagNode) =>
    nodes.set(n.id, {
      id: n.id,
      seq: n.seq,
      pending: false,
      role: n.role,
      predecessor: n.predecessor,
      caller: n.caller,
      content: n.role === 'user' ? n.content : null,
    });
  if (options.dag) {
    for await (const n of options.dag.nodesAfter(sessionId, parent?.seq ?? 0)) {
      if (commit.seq !== null && n.seq > commit.seq) break;
      keep(n);
    }
  }
  if (!nodes.has(last)) {
    nodes.clear();
    for (const n of (await options.mirror.read(sessionId, commit.sha)).messages) keep(n);
  }
  let n = nodes.get(last);
  if (n && rides(n)) n = nodes.get(n.caller!);
  for (let steps = 0; n !== undefined && steps <= nodes.size; steps++) {
    if (n.role === 'user') return textOf(n.content);
    n = n.predecessor === null ? undefined : nodes.get(n.predecessor);
  }
  return '';
}

/** A turn reported to the service, with the sync that just ran for its session. */
export interface ReportedTurn {
  sessionId: string;
  report: Queued;
  result: SyncResult;
  /** The logs this run of the service has read already, shared by the run's turns. */
  seen: RunLogs;
}

/** The project auto-commit of one reported turn, labelled from that turn's session commit. */
export async function projectTurn(
  options: MirrorServiceOptions,
  emit: <E extends ServiceEventName>(event: E, payload: ServiceEvents[E]) => void,
  turn: ReportedTurn,
): Promise<void> {
  const { sessionId, report, result } = turn;
  const { projects, projectGit } = options;
  if (!projects || !projectGit) return;
  const project = await projects.projectOfSession(sessionId);
  if (project === null) return;
  if (project.status !== 'active') {
    emit('skipped', {
      sessionId,
      reason: `project-${project.status}`,
      warning: `the project ${JSON.stringify(project.name)} is ${project.status}: the agent's edits are not auto-committed`,
      result,
    });
    return;
  }
  const found = await sessionCommitOf(options.mirror, turn);
  const tip = found?.commit;
  const session = options.dag ? await options.dag.getSession(sessionId) : null;
  const outcome = await projectGit.afterTurn({
    workdir: project.workdir,
    sessionId,
    turn: tip?.turn ?? 1,
    userMessage: found ? await userMessageOf(options, sessionId, found) : '',
    model: session?.model ?? 'unknown model',
    sessionCommit: tip?.sha ?? null,
    touchedPaths: report.touchedPaths,
    ...(report.writtenBlobs ? { writtenBlobs: report.writtenBlobs } : {}),
    snapshot: report.snapshot,
  });
  emit('project', { sessionId, projectId: project.id, result: outcome });
  if (outcome.status === 'skipped' && outcome.warning !== null)
    emit('skipped', { sessionId, reason: outcome.reason, warning: outcome.warning, result });
}
