// The actions a server adds to core's: paging a session's rows out (the browser's "Save for
// offline"), writing a message (replay's "send from here", a fork from an old turn), a project's
// own git log, and the git step of the New Project flow. Validated at the edge like core's, the
// same typed errors, and one rule: after every write the session's mirror is synced. A message
// in a session bound to a project ends its turn the way a dispatcher does: core's mirror service
// syncs the session and runs the project auto-commit (snapshot before the agent, the paths its
// tools wrote after), and the outcome goes back to the client.
import {
  createActions,
  createMirrorService,
  dispatch,
  EntityGitError,
  idParam,
  intParam,
  invalidArgument,
  paramsObject,
  requireProject,
  requireSession,
  type ActionRequest,
  type ActionResponse,
  type AfterTurnResult,
  type DagNode,
  type DagSource,
  type DagWriter,
  type Mirror,
  type MirrorService,
  type Project,
  type ProjectGit,
  type ProjectStore,
  type SearchSource,
  type ServiceEvents,
  type SyncResult,
  type TurnFilesSource,
  type TurnReport,
  type WorkdirPolicy,
} from '@entity-git/core';
import { nodeWorkdirPolicy } from '@entity-git/node-fs';
import { randomUUID } from 'node:crypto';
import { toolsFor, type Agent } from './agent.js';
import { ensureRepo, isRepo, readLog } from './project-repo.js';
import { projectStatusAction } from './project-status.js';
import { importProjectsAction } from './import-projects.js';
import { DEFAULT_READ_AHEAD, turnWindow } from './turn-window.js';
import { historyAction } from './history-page.js';
import type { ProjectTurnResult, ServerActionMap, ServerActionName } from './protocol.js';

export const DEFAULT_EXPORT_LIMIT = 1000;
export const MAX_EXPORT_LIMIT = 10_000;
export const DEFAULT_LOG_LIMIT = 50;
export const MAX_LOG_LIMIT = 500;
/** A message longer than this (UTF-16 code units) is refused. */
export const MAX_MESSAGE_LENGTH = 100_000;

export interface ServerActionsOptions {
  dag: DagSource;
  writer: DagWriter;
  projects: ProjectStore;
  mirror: Mirror;
  agent?: Agent | null;
  /** The clock for new nodes, seconds since the epoch. Default `Date.now() / 1000`. */
  now?: () => number;
  /** Told about a sync that failed after a write (the write itself stands). */
  onSyncError?: (sessionId: string, err: unknown) => void;
  /** Told about every sync that wrote something after a write (the search index follows it). */
  onSynced?: (result: SyncResult) => void;
  /** Answers `search_messages` (`@entity-git/search` over the server's root). Without it the action is refused. */
  search?: SearchSource;
  /**
   * The project auto-commit (`createNodeProjectGit()` on Node). Without it a session's project is
   * never committed to and `send_message` reports `project: null`.
   */
  projectGit?: ProjectGit | null;
  /** Answers the turn-file actions (`list_turn_files`, `turn_file_diff`, `restore_turn_files`); without it they are refused. */
  turnFiles?: TurnFilesSource | null;
  /** Told about every project auto-commit outcome (the server pushes it to its sockets). */
  onProjectTurn?: (sessionId: string, result: ProjectTurnResult) => void;
  /** Turns of a session's rows read ahead for replay's steps (`turn_messages`); 0 reads each step. Default {@link DEFAULT_READ_AHEAD}. */
  readAhead?: number;
  /** Checks a new project's workdir. Default `nodeWorkdirPolicy()` (no system, home or foreign folder, one project per workdir). */
  workdirPolicy?: WorkdirPolicy;
}

type Handlers<N extends ServerActionName> = {
  [K in N]: (params: ServerActionMap[K]['params']) => Promise<ServerActionMap[K]['result']>;
};
/** The actions the server answers itself (two of them wrap core's to add a step). */
type OwnName =
  | 'create_project'
  | 'add_session_to_project'
  | 'export_session'
  | 'send_message'
  | 'project_log'
  | 'server_info'
  | 'project_status'
  | 'import_projects';

export type ServerActions = Handlers<ServerActionName> & {
  /** Validate and run one request; never throws. */
  handle(request: ActionRequest): Promise<ActionResponse>;
  /** The mirror service that ends each `send_message` turn (sync, then the project auto-commit). */
  readonly service: MirrorService;
};

/** The server's actions: core's handlers (writes followed by a sync) plus the server's own. */
export function createServerActions(options: ServerActionsOptions): ServerActions {
  const { dag, writer, projects, mirror } = options;
  const now = options.now ?? (() => Date.now() / 1000);
  const projectGit = options.projectGit ?? null;
  const workdirPolicy = options.workdirPolicy ?? nodeWorkdirPolicy();
  const core = createActions({
    dag,
    mirror,
    writer,
    projects,
    workdirPolicy,
    ...(projectGit ? { projectGit } : {}),
    ...(options.turnFiles ? { turnFiles: options.turnFiles } : {}),
    ...(options.search ? { search: options.search } : {}),
  });
  const service = createMirrorService({ mirror, dag, projects, ...(projectGit ? { projectGit } : {}) });

  /** The DAG is written already: a failing mirror is reported, never turned into a failed write. */
  const sync = async (sessionId: string): Promise<boolean> => {
    try {
      const result = await mirror.sync(sessionId);
      if (!result.noop) options.onSynced?.(result);
      return true;
    } catch (err) {
      options.onSyncError?.(sessionId, err);
      return false;
    }
  };

  const branchesOf = async (sessionId: string) =>
    (await mirror.branches(sessionId).catch(() => [])).map((b) => ({
      name: b.name,
      commit: b.commit,
      turns: b.turns,
      head: b.head,
    }));

  const hasNode = async (sessionId: string, nodeId: string): Promise<boolean> => {
    for await (const n of dag.nodesAfter(sessionId, 0)) if (n.id === nodeId) return true;
    return false;
  };

  const projectTurn = async (projectId: string, r: AfterTurnResult, workdir: string): Promise<ProjectTurnResult> => {
    if (r.status === 'committed') {
      const [commit] = await readLog(workdir, 1, r.commit);
      return {
        status: 'committed',
        project_id: projectId,
        paths: [...r.paths],
        deferred: r.deferred.map((d) => d.commit),
        commit: commit ?? { sha: r.commit, author: '', committer: '', time: 0, subject: '', agent: true },
      };
    }
    return {
      status: 'skipped',
      project_id: projectId,
      reason: r.reason,
      warning: r.warning,
      user_paths: r.reason === 'nothing-to-commit' ? [] : [...r.userPaths],
      agent_paths: r.reason === 'nothing-to-commit' ? [] : [...r.agentPaths],
    };
  };

  /**
   * End a turn through the service and wait for it: the sync, then (for a session in a project)
   * the auto-commit. Waits for the service to be idle, so a retry is waited out too.
   */
  const endTurn = async (
    sessionId: string,
    project: Project | null,
    turn: TurnReport,
  ): Promise<{ synced: boolean; project: ProjectTurnResult | null }> => {
    let synced = false;
    let outcome: ServiceEvents['project'] | null = null;
    let warned: ServiceEvents['skipped'] | null = null;
    let failed: ServiceEvents['failed'] | null = null;
    const off = [
      service.on('synced', (e) => {
        if (e.sessionId === sessionId) synced = true;
      }),
      service.on('project', (e) => {
        if (e.sessionId === sessionId) outcome = e;
      }),
      // The service's own skips of a project (paused, done); the engine's come with a `project` event.
      service.on('skipped', (e) => {
        if (e.sessionId === sessionId && e.reason.startsWith('project-')) warned = e;
      }),
      service.on('failed', (e) => {
        if (e.sessionId === sessionId) failed = e;
      }),
    ];
    try {
      service.notify(sessionId, turn);
      await service.drain();
    } finally {
      for (const f of off) f();
    }
    const f = failed as ServiceEvents['failed'] | null;
    if (f !== null) options.onSyncError?.(sessionId, f.error);
    if (project === null || projectGit === null) return { synced, project: null };
    const o = outcome as ServiceEvents['project'] | null;
    const w = warned as ServiceEvents['skipped'] | null;
    let result: ProjectTurnResult | null = null;
    if (o !== null) result = await projectTurn(o.projectId, o.result, project.workdir);
    else if (w !== null)
      result = {
        status: 'skipped',
        project_id: project.id,
        reason: w.reason,
        warning: w.warning,
        user_paths: [],
        agent_paths: [],
      };
    else if (f !== null)
      result = { status: 'failed', project_id: project.id, code: f.error.code, message: f.error.message };
    if (result !== null) {
      try {
        options.onProjectTurn?.(sessionId, result);
      } catch {
        // a listener's bug is not the turn's failure
      }
    }
    return { synced, project: result };
  };

  const own: Handlers<OwnName> = {
    async create_project(params) {
      const p = paramsObject(params);
      if (p.init_repo !== undefined && typeof p.init_repo !== 'boolean')
        invalidArgument('init_repo must be a boolean', { param: 'init_repo' });
      const init = p.init_repo === true;
      // `git init` writes in the user's folder: only when they asked, after they saw where.
      const checked: WorkdirPolicy = async (workdir, existing) => {
        const resolved = await workdirPolicy(workdir, existing);
        if (!init && !(await isRepo(resolved)))
          throw new EntityGitError(
            'NOT_A_REPOSITORY',
            `${JSON.stringify(resolved)} is not in a git repository: ask again with init_repo to create one`,
            { workdir: resolved },
          );
        return resolved;
      };
      const project = await createActions({ dag, mirror, projects, workdirPolicy: checked }).create_project(params);
      const repo = await ensureRepo(project.workdir, init);
      const sessionId = paramsObject(params).session_id;
      if (typeof sessionId === 'string') await sync(sessionId);
      return { ...project, repo };
    },
    async add_session_to_project(params) {
      const project = await core.add_session_to_project(params);
      await sync(params.session_id);
      return project;
    },
    async export_session(params) {
      const p = paramsObject(params);
      const sessionId = idParam(p, 'session_id');
      const after = intParam(p, 'after_seq', { fallback: 0, min: 0 });
      const limit = intParam(p, 'limit', { fallback: DEFAULT_EXPORT_LIMIT, min: 1, max: MAX_EXPORT_LIMIT });
      const session = await requireSession(dag, sessionId);
      const nodes: DagNode[] = [];
      let more = false;
      for await (const n of dag.nodesAfter(sessionId, after, { batchSize: Math.min(limit + 1, 1000) })) {
        if (nodes.length === limit) {
          more = true;
          break;
        }
        nodes.push(n);
      }
      return { session, nodes, next_after_seq: more ? nodes.at(-1)!.seq : null, branches: await branchesOf(sessionId) };
    },
    async send_message(params) {
      const p = paramsObject(params);
      const sessionId = idParam(p, 'session_id');
      const content = p.content;
      if (typeof content !== 'string' || content.trim() === '')
        invalidArgument('content must be a non-empty string', { param: 'content' });
      if ((content as string).length > MAX_MESSAGE_LENGTH)
        invalidArgument(`content is longer than ${MAX_MESSAGE_LENGTH} characters`, { param: 'content' });
      const session = await requireSession(dag, sessionId);
      let predecessor: string | null;
      if (p.continue_from === undefined || p.continue_from === null) {
        // No view given: continue the conversation where HEAD's branch ends.
        predecessor = (await mirror.log(sessionId).catch(() => []))[0]?.node ?? null;
      } else {
        predecessor = idParam(p, 'continue_from');
        if (!(await hasNode(sessionId, predecessor))) {
          throw new EntityGitError(
            'NODE_NOT_FOUND',
            `session ${JSON.stringify(sessionId)} has no node ${JSON.stringify(predecessor)}`,
            { sessionId, nodeId: predecessor },
          );
        }
      }
      const project = await projects.projectOfSession(sessionId);
      // The turn begins: what the user has uncommitted in the project now is theirs (null without a project).
      const snapshot = await service.beforeTurn(sessionId);
      const before = await branchesOf(sessionId);
      const node = await writer.appendNode({
        id: `u-${randomUUID()}`,
        session_id: sessionId,
        role: 'user',
        content: content as string,
        predecessor,
        created_at: now(),
      });
      let head = node.id;
      let reply: DagNode | null = null;
      const touched: string[] = [];
      const written: Record<string, string> = {};
      const answer = options.agent
        ? await options.agent({
            session,
            message: node,
            project: project && {
              id: project.id,
              name: project.name,
              workdir: project.workdir,
              status: project.status,
            },
            tools: toolsFor(project, touched, written),
          })
        : null;
      if (answer !== null && answer !== undefined) {
        reply = await writer.appendNode({
          id: `a-${randomUUID()}`,
          session_id: sessionId,
          role: 'assistant',
          content: answer,
          predecessor: node.id,
          created_at: now(),
        });
        head = reply.id;
      }
      await writer.setHead(sessionId, head);
      const ended = await endTurn(sessionId, project, { touchedPaths: touched, writtenBlobs: written, snapshot });
      const branches = await branchesOf(sessionId);
      const current = branches.find((b) => b.head) ?? null;
      return {
        session_id: sessionId,
        node,
        reply,
        branch: current?.name ?? null,
        commit: current?.commit ?? null,
        branch_created: current !== null && !before.some((b) => b.name === current.name),
        branches,
        synced: ended.synced,
        project: ended.project,
      };
    },
    async project_log(params) {
      const p = paramsObject(params);
      const projectId = idParam(p, 'project_id');
      const limit = intParam(p, 'limit', { fallback: DEFAULT_LOG_LIMIT, min: 1, max: MAX_LOG_LIMIT });
      const project = await requireProject(projects, projectId);
      const repo = await isRepo(project.workdir);
      return {
        project_id: projectId,
        workdir: project.workdir,
        repo,
        commits: repo ? await readLog(project.workdir, limit) : [],
      };
    },
    project_status: projectStatusAction(projects, projectGit),
    import_projects: importProjectsAction(projects, workdirPolicy),
    async server_info() {
      return { name: 'entity-git ws-server', actions: Object.keys(handlers).sort(), agent: Boolean(options.agent) };
    },
  };

  const { handle: _coreHandle, ...coreHandlers } = core;
  const handlers: Handlers<ServerActionName> = {
    ...coreHandlers,
    ...own,
    turn_messages: turnWindow(dag, core.turn_messages, options.readAhead ?? DEFAULT_READ_AHEAD),
    git_history: historyAction(dag, mirror, core.git_history),
  };

  return { ...handlers, service, handle: (request: ActionRequest) => dispatch(handlers, request) };
}
