import type { DagSource, DagWriter } from '../dag/dag-source.js';
import type { ProjectStore } from '../dag/project-store.js';
import { EntityGitError, normaliseError } from '@entity-git/git';
import type { Mirror } from '../mirror/mirror.js';
import type { ProjectGit } from '../project/project-git-types.js';
import { agentTurnActions } from './agent-turn-actions.js';
import { isAbsolutePath } from '../model/is-absolute-path.js';
import { PROJECT_STATUSES, type DagNode, type Project, type ProjectStatus } from '../model/types.js';
import {
  idParam,
  intParam,
  invalidArgument,
  optionalString,
  paramsObject,
  requireProject,
  requireSession,
  shaParam,
} from './params.js';
import type {
  ActionMap,
  ActionName,
  ActionRequest,
  ActionResponse,
  ProjectSummary,
  SessionSummary,
  TimelineCommit,
} from './action-types.js';

export interface ActionsOptions {
  dag: DagSource;
  mirror: Mirror;
  /** Needed by `git_switch_branch` (it moves the DAG head). */
  writer?: Pick<DagWriter, 'setHead'>;
  /** Needed by the project actions. */
  projects?: ProjectStore;
  /** Needed by `revert_agent_turn` and `project_agent_commits` (the project auto-commit, e.g. `createNodeProjectGit()`). */
  projectGit?: Pick<ProjectGit, 'revertAgentTurn' | 'agentCommits'>;
}

export type Actions = { [K in ActionName]: (params: ActionMap[K]['params']) => Promise<ActionMap[K]['result']> } & {
  /** Validate and run one request; never throws (errors come back as `{ ok: false }`). */
  handle(request: ActionRequest): Promise<ActionResponse>;
};

const summary = (p: Project): ProjectSummary => ({
  id: p.id,
  name: p.name,
  workdir: p.workdir,
  status: p.status,
  description: p.description,
  created_at: p.created_at,
  sessions: p.sessions,
  sessions_count: p.sessions.length,
});

/**
 * The action handlers (DESIGN.md §6), transport-free: input validated at the edge with typed
 * errors (`INVALID_ARGUMENT`, `INVALID_ID`, `INVALID_WORKDIR`, `UNKNOWN_ACTION`, and the
 * mirror's and stores' own codes), results as the types in action-types.ts. Replay is read-only:
 * `git_checkout` returns the view and the node a new message would continue from; the DAG
 * changes only when that message is written (a fork), and the next sync makes the branch.
 */
export function createActions(options: ActionsOptions): Actions {
  const { dag, mirror } = options;
  const needProjects = (): ProjectStore => options.projects ?? invalidArgument('this server has no project store');

  const history = async (params: unknown) => {
    const p = paramsObject(params);
    const sessionId = idParam(p, 'session_id');
    const branch = optionalString(p, 'branch');
    await requireSession(dag, sessionId);
    const branches = await mirror.branches(sessionId).catch(() => []);
    const name = branch ?? branches.find((b) => b.head)?.name ?? null;
    const log = name === null ? [] : await mirror.log(sessionId, { branch: name });
    const commits: TimelineCommit[] = log.map((c) => ({
      sha: c.sha,
      parents: c.parents,
      turn: c.turn,
      subject: c.subject,
      time: c.time,
      node: c.node,
      seq: c.seq,
    }));
    return { session_id: sessionId, branch: name, commits };
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

  const branchesOf = async (sessionId: string) =>
    (await mirror.branches(sessionId)).map((b) => ({ name: b.name, commit: b.commit, turns: b.turns, head: b.head }));

  const sessionSummary = async (sessionId: string): Promise<SessionSummary | null> => {
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
  };

  const actions: Omit<Actions, 'handle'> = {
    ...agentTurnActions(options),
    git_history: history,
    git_session_log: history,
    git_checkout: checkout,
    git_session_checkout: checkout,
    async git_branches(params) {
      const sessionId = idParam(paramsObject(params), 'session_id');
      await requireSession(dag, sessionId);
      return { session_id: sessionId, branches: await branchesOf(sessionId) };
    },
    async git_switch_branch(params) {
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
      return { session_id: sessionId, head_node: tip.node, branches: await branchesOf(sessionId) };
    },
    async list_sessions() {
      const sessions: SessionSummary[] = [];
      for (const id of await dag.listSessions()) {
        const s = await sessionSummary(id);
        if (s) sessions.push(s);
      }
      return { sessions };
    },
    async list_projects() {
      return { projects: (await needProjects().listProjects()).map(summary) };
    },
    async project_detail(params) {
      const projectId = idParam(paramsObject(params), 'project_id');
      const project = await requireProject(needProjects(), projectId);
      const details: SessionSummary[] = [];
      for (const id of project.sessions) {
        const s = await sessionSummary(id);
        if (s) details.push(s);
      }
      return { ...summary(project), session_details: details };
    },
    async create_project(params) {
      const p = paramsObject(params);
      const name =
        typeof p.name === 'string' && p.name.trim() !== ''
          ? p.name
          : invalidArgument('name must be a non-empty string', { param: 'name' });
      const workdir = p.workdir;
      if (typeof workdir !== 'string' || !isAbsolutePath(workdir)) {
        throw new EntityGitError('INVALID_WORKDIR', `workdir must be an absolute path: ${JSON.stringify(workdir)}`, {
          workdir,
        });
      }
      const description = optionalString(p, 'description');
      const sessionId = p.session_id === undefined || p.session_id === null ? undefined : idParam(p, 'session_id');
      if (sessionId !== undefined) await requireSession(dag, sessionId);
      const store = needProjects();
      const project = await store.createProject({ name, workdir, description: description ?? null });
      if (sessionId !== undefined) await store.addSessionToProject(project.id, sessionId);
      return summary((await store.getProject(project.id))!);
    },
    async add_session_to_project(params) {
      const p = paramsObject(params);
      const projectId = idParam(p, 'project_id');
      const sessionId = idParam(p, 'session_id');
      await requireSession(dag, sessionId);
      const store = needProjects();
      await store.addSessionToProject(projectId, sessionId);
      return summary((await store.getProject(projectId))!);
    },
    async turn_messages(params) {
      const p = paramsObject(params);
      const sessionId = idParam(p, 'session_id');
      const toNode = idParam(p, 'to_node');
      const toSeq = intParam(p, 'to_seq', -1, 1, Number.MAX_SAFE_INTEGER);
      const fromSeq = intParam(p, 'from_seq', 0, 0, Number.MAX_SAFE_INTEGER);
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
      for (
        let n = range.get(toNode);
        n !== undefined;
        n = n.predecessor === null ? undefined : range.get(n.predecessor)
      )
        chain.add(n.id);
      const messages = [...range.values()].filter(
        (n) => chain.has(n.id) || (n.role === 'tool' && n.caller !== null && chain.has(n.caller)),
      );
      return { session_id: sessionId, messages: messages.sort((a, b) => a.seq - b.seq) };
    },
    async set_project_status(params) {
      const p = paramsObject(params);
      const projectId = idParam(p, 'project_id');
      const status = p.status;
      if (typeof status !== 'string' || !(PROJECT_STATUSES as readonly string[]).includes(status)) {
        invalidArgument(`status must be one of ${PROJECT_STATUSES.join(', ')}, got ${JSON.stringify(status)}`, {
          param: 'status',
        });
      }
      const store = needProjects();
      await requireProject(store, projectId);
      return summary(await store.setProjectStatus(projectId, status as ProjectStatus));
    },
  };

  return { ...actions, handle: (request: ActionRequest) => dispatch(actions, request) };
}

/**
 * Validate `request` and run the handler of `table` it names; never throws: the result, or the
 * error's code and message (`UNKNOWN_ACTION` for a name the table lacks, `STORAGE_ERROR` for an
 * error without a code), as `{ ok }`, with the request's `id` when it had one. What `handle`
 * does; a server adding actions of its own dispatches to its table through it.
 */
export async function dispatch(table: object, request: ActionRequest): Promise<ActionResponse> {
  const id =
    request && typeof request === 'object' && (typeof request.id === 'string' || typeof request.id === 'number')
      ? request.id
      : undefined;
  const envelope = <T extends ActionResponse>(r: T): T => (id === undefined ? r : { ...r, id });
  try {
    if (!request || typeof request !== 'object' || typeof request.action !== 'string')
      invalidArgument('a request needs an action name');
    const fn = Object.hasOwn(table, request.action)
      ? (table as Record<string, (p: unknown) => Promise<unknown>>)[request.action]
      : undefined;
    if (typeof fn !== 'function')
      throw new EntityGitError('UNKNOWN_ACTION', `unknown action ${JSON.stringify(request.action)}`, {
        action: request.action,
      });
    return envelope({ ok: true, result: await fn(request.params) });
  } catch (err) {
    const e = normaliseError(err, { code: 'STORAGE_ERROR' });
    return envelope({ ok: false, error: { code: e.code, message: e.message } });
  }
}
