// The actions a server adds to core's: paging a session's rows out (the browser's "Save for
// offline"), writing a message (replay's "send from here", a fork from an old turn), a project's
// own git log, and the git step of the New Project flow. Validated at the edge like core's, the
// same typed errors, and one rule: after every write the session's mirror is synced.
import {
  assertId, createActions, EntityGitError,
  type ActionRequest, type ActionResponse, type Actions, type DagNode, type DagSource, type DagWriter, type JsonValue,
  type Mirror, type ProjectStore, type Session,
} from '@entity-git/core';
import { randomUUID } from 'node:crypto';
import { ensureRepo, isRepo, readLog } from './project-repo.js';
import type { ServerActionMap, ServerActionName } from './protocol.js';

/** Replies to a message sent from the app; null for no reply. The example has no model. */
export type Agent = (input: { session: Session; message: DagNode }) => JsonValue | null | Promise<JsonValue | null>;

/** An agent that says what it was told: enough to see a fork become a conversation. */
export const echoAgent: Agent = ({ message }) =>
  `You said: ${typeof message.content === 'string' ? message.content : JSON.stringify(message.content)} — (the example server's echo agent; no model is connected)`;

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
}

type Handlers<N extends ServerActionName> = { [K in N]: (params: ServerActionMap[K]['params']) => Promise<ServerActionMap[K]['result']> };
/** The actions the server answers itself (two of them wrap core's to add a step). */
type OwnName = 'create_project' | 'add_session_to_project' | 'export_session' | 'send_message' | 'project_log' | 'server_info';

export type ServerActions = Handlers<ServerActionName> & {
  /** Validate and run one request; never throws. */
  handle(request: ActionRequest): Promise<ActionResponse>;
  /** Core's handlers, as the server runs them. */
  readonly core: Actions;
};

const bad = (message: string, data: Record<string, unknown> = {}): never => {
  throw new EntityGitError('INVALID_ARGUMENT', message, data);
};

function object(params: unknown): Record<string, unknown> {
  if (params === undefined || params === null) return {};
  if (typeof params !== 'object' || Array.isArray(params)) bad('params must be an object');
  return params as Record<string, unknown>;
}

function idParam(p: Record<string, unknown>, key: string): string {
  const v = p[key];
  if (typeof v !== 'string' || v === '') bad(`${key} must be a non-empty string`, { param: key });
  assertId(v, key);
  return v as string;
}

function intParam(p: Record<string, unknown>, key: string, fallback: number, min: number, max: number): number {
  const v = p[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) bad(`${key} must be an integer from ${min} to ${max}`, { param: key });
  return v as number;
}

/** The server's actions: core's handlers (writes followed by a sync) plus the server's own. */
export function createServerActions(options: ServerActionsOptions): ServerActions {
  const { dag, writer, projects, mirror } = options;
  const now = options.now ?? (() => Date.now() / 1000);
  const core = createActions({ dag, mirror, writer, projects });

  const requireSession = async (sessionId: string): Promise<Session> => {
    const s = await dag.getSession(sessionId);
    if (s === null) throw new EntityGitError('SESSION_NOT_FOUND', `no session ${JSON.stringify(sessionId)}`, { sessionId });
    return s;
  };

  /** The DAG is written already: a failing mirror is reported, never turned into a failed write. */
  const sync = async (sessionId: string): Promise<boolean> => {
    try {
      await mirror.sync(sessionId);
      return true;
    } catch (err) {
      options.onSyncError?.(sessionId, err);
      return false;
    }
  };

  const branchesOf = async (sessionId: string) =>
    (await mirror.branches(sessionId).catch(() => [])).map((b) => ({ name: b.name, commit: b.commit, turns: b.turns, head: b.head }));

  const hasNode = async (sessionId: string, nodeId: string): Promise<boolean> => {
    for await (const n of dag.nodesAfter(sessionId, 0)) if (n.id === nodeId) return true;
    return false;
  };

  const own: Handlers<OwnName> = {
    async create_project(params) {
      const project = await core.create_project(params);
      const repo = await ensureRepo(project.workdir);
      const sessionId = object(params).session_id;
      if (typeof sessionId === 'string') await sync(sessionId);
      return { ...project, repo };
    },
    async add_session_to_project(params) {
      const project = await core.add_session_to_project(params);
      await sync(params.session_id);
      return project;
    },
    async export_session(params) {
      const p = object(params);
      const sessionId = idParam(p, 'session_id');
      const after = intParam(p, 'after_seq', 0, 0, Number.MAX_SAFE_INTEGER);
      const limit = intParam(p, 'limit', DEFAULT_EXPORT_LIMIT, 1, MAX_EXPORT_LIMIT);
      const session = await requireSession(sessionId);
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
      const p = object(params);
      const sessionId = idParam(p, 'session_id');
      const content = p.content;
      if (typeof content !== 'string' || content.trim() === '') bad('content must be a non-empty string', { param: 'content' });
      if ((content as string).length > MAX_MESSAGE_LENGTH) bad(`content is longer than ${MAX_MESSAGE_LENGTH} characters`, { param: 'content' });
      const session = await requireSession(sessionId);
      const before = await branchesOf(sessionId);
      let predecessor: string | null;
      if (p.continue_from === undefined || p.continue_from === null) {
        // No view given: continue the conversation where HEAD's branch ends.
        predecessor = (await mirror.log(sessionId).catch(() => []))[0]?.node ?? null;
      } else {
        predecessor = idParam(p, 'continue_from');
        if (!(await hasNode(sessionId, predecessor))) {
          throw new EntityGitError('NODE_NOT_FOUND', `session ${JSON.stringify(sessionId)} has no node ${JSON.stringify(predecessor)}`, { sessionId, nodeId: predecessor });
        }
      }
      const node = await writer.appendNode({ id: `u-${randomUUID()}`, session_id: sessionId, role: 'user', content: content as string, predecessor, created_at: now() });
      let head = node.id;
      let reply: DagNode | null = null;
      const answer = options.agent ? await options.agent({ session, message: node }) : null;
      if (answer !== null && answer !== undefined) {
        reply = await writer.appendNode({ id: `a-${randomUUID()}`, session_id: sessionId, role: 'assistant', content: answer, predecessor: node.id, created_at: now() });
        head = reply.id;
      }
      await writer.setHead(sessionId, head);
      const synced = await sync(sessionId);
      const branches = await branchesOf(sessionId);
      const current = branches.find((b) => b.head) ?? null;
      return {
        session_id: sessionId, node, reply, branch: current?.name ?? null, commit: current?.commit ?? null,
        branch_created: current !== null && !before.some((b) => b.name === current.name), branches, synced,
      };
    },
    async project_log(params) {
      const p = object(params);
      const projectId = idParam(p, 'project_id');
      const limit = intParam(p, 'limit', DEFAULT_LOG_LIMIT, 1, MAX_LOG_LIMIT);
      const project = await projects.getProject(projectId);
      if (project === null) throw new EntityGitError('PROJECT_NOT_FOUND', `no project ${JSON.stringify(projectId)}`, { projectId });
      const repo = await isRepo(project.workdir);
      return { project_id: projectId, workdir: project.workdir, repo, commits: repo ? await readLog(project.workdir, limit) : [] };
    },
    async server_info() {
      return { name: 'entity-git ws-server', actions: Object.keys(table).sort(), agent: Boolean(options.agent) };
    },
  };

  const { handle: _coreHandle, ...coreHandlers } = core;
  const handlers: Handlers<ServerActionName> = { ...coreHandlers, ...own };
  const table = handlers as unknown as Record<string, (p: unknown) => Promise<unknown>>;

  return {
    ...handlers,
    core,
    async handle(request: ActionRequest): Promise<ActionResponse> {
      // Core's own actions go through core's `handle`; the server's through the same envelope here.
      const r = request as ActionRequest | null | undefined;
      const name = r && typeof r === 'object' && typeof r.action === 'string' ? r.action : null;
      if (name === null || !Object.prototype.hasOwnProperty.call(own, name)) return core.handle(request);
      const id = typeof r!.id === 'string' || typeof r!.id === 'number' ? r!.id : undefined;
      const envelope = <T extends ActionResponse>(res: T): T => (id === undefined ? res : { ...res, id });
      try {
        return envelope({ ok: true, result: await table[name]!(r!.params) });
      } catch (err) {
        const e = err instanceof EntityGitError ? err : new EntityGitError('STORAGE_ERROR', String((err as Error)?.message ?? err), {}, { cause: err });
        return envelope({ ok: false, error: { code: e.code, message: e.message } });
      }
    },
  };
}
