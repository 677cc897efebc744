import { EntityGitError } from '@entity-git/git';
import { isAbsolutePath } from '../model/is-absolute-path.js';
import { assertId } from '../model/names.js';
import { PROJECT_STATUSES, type DagNode, type Project, type ProjectStatus, type Session } from '../model/types.js';
import { sessionRow, validateNode, validateSession } from '../model/validate.js';
import type { DagSource, DagWriter } from './dag-source.js';
import { draftNode, type AppendNodeInput } from './draft-node.js';
import type { ProjectStore } from './project-store.js';

const clone = <T>(v: T): T => (v === undefined ? v : structuredCloneJson(v));
function structuredCloneJson<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/**
 * The in-memory reference implementation of {@link DagSource}, {@link DagWriter} and
 * {@link ProjectStore}. Values are copied in and out, so callers cannot change stored rows.
 * `addNode` takes a whole node (with its seq) for fixtures; `appendNode` assigns the seq.
 */
export class MemoryDag implements DagSource, DagWriter, ProjectStore {
  private readonly sessions = new Map<string, Session>();
  private readonly nodes = new Map<string, DagNode[]>();
  private readonly projects = new Map<string, Project>();
  private clock: () => number;
  /** Per session: writes so far (the change marker). */
  private readonly revs = new Map<string, number>();
  /** Makes this instance's markers its own: another MemoryDag's session with as many writes differs. */
  private readonly instance = Math.random().toString(36).slice(2, 12);

  constructor(options: { now?: () => number } = {}) {
    this.clock = options.now ?? (() => Date.now() / 1000);
  }

  async listSessions(): Promise<string[]> {
    return [...this.sessions.keys()];
  }

  async getSession(sessionId: string): Promise<Session | null> {
    const s = this.sessions.get(sessionId);
    return s ? clone(s) : null;
  }

  async *nodesAfter(sessionId: string, afterSeq = 0): AsyncIterable<DagNode> {
    const list = this.nodes.get(sessionId) ?? [];
    // Kept in seq order: start at the first node after `afterSeq`.
    let lo = 0;
    for (let hi = list.length; lo < hi; ) {
      const mid = (lo + hi) >>> 1;
      if (list[mid]!.seq > afterSeq) hi = mid;
      else lo = mid + 1;
    }
    for (let i = lo; i < list.length; i++) yield clone(list[i]!);
  }

  async getHead(sessionId: string): Promise<string | null> {
    return this.sessions.get(sessionId)?.head ?? null;
  }

  /** Bumped by every write method of this class; rows are copied in and out, so none escapes it. */
  async changeMarker(sessionId: string): Promise<string | null> {
    const rev = this.revs.get(sessionId);
    return rev === undefined ? null : `${this.instance}.${rev}`;
  }

  private touch(sessionId: string): void {
    this.revs.set(sessionId, (this.revs.get(sessionId) ?? 0) + 1);
  }

  async createSession(input: Partial<Session> & { id: string }): Promise<Session> {
    const session = sessionRow(input, this.clock);
    if (this.sessions.has(session.id)) {
      throw new EntityGitError('INVALID_SESSION', `session ${JSON.stringify(session.id)} exists already`);
    }
    this.sessions.set(session.id, clone(session));
    this.nodes.set(session.id, []);
    this.touch(session.id);
    return clone(session);
  }

  /** Replace a session row's fields (not its id). */
  async updateSession(sessionId: string, patch: Partial<Omit<Session, 'id'>>): Promise<Session> {
    const s = this.requireSession(sessionId);
    const next = { ...s, ...clone(patch), id: s.id };
    validateSession(next);
    this.sessions.set(sessionId, next);
    this.touch(sessionId);
    return clone(next);
  }

  /** Insert a node exactly as given (fixtures, imports). Its seq must be unused in the session. */
  async addNode(node: DagNode): Promise<DagNode> {
    validateNode(node);
    const list = this.nodes.get(node.session_id);
    if (!list) throw new EntityGitError('SESSION_NOT_FOUND', `no session ${JSON.stringify(node.session_id)}`);
    if (list.some((n) => n.id === node.id)) {
      throw new EntityGitError('DAG_DUPLICATE_ID', `node ${JSON.stringify(node.id)} exists already`, {
        nodeId: node.id,
      });
    }
    if (list.some((n) => n.seq === node.seq)) {
      throw new EntityGitError('DAG_DUPLICATE_SEQ', `seq ${node.seq} is used already`, { seq: node.seq });
    }
    list.push(clone(node));
    list.sort((a, b) => a.seq - b.seq);
    this.touch(node.session_id);
    return clone(node);
  }

  async appendNode(input: AppendNodeInput): Promise<DagNode> {
    const list = this.nodes.get(input.session_id);
    if (!list) throw new EntityGitError('SESSION_NOT_FOUND', `no session ${JSON.stringify(input.session_id)}`);
    const seq = (list.at(-1)?.seq ?? 0) + 1;
    return this.addNode(draftNode(input, { now: () => this.clock(), seq }));
  }

  async fillNode(
    sessionId: string,
    nodeId: string,
    content: DagNode['content'],
    metadata?: DagNode['metadata'],
  ): Promise<DagNode> {
    const list = this.nodes.get(sessionId);
    const i = list?.findIndex((n) => n.id === nodeId) ?? -1;
    if (!list || i < 0)
      throw new EntityGitError(
        'NODE_NOT_FOUND',
        `no node ${JSON.stringify(nodeId)} in session ${JSON.stringify(sessionId)}`,
      );
    const next = { ...list[i]!, content, metadata: metadata === undefined ? list[i]!.metadata : metadata };
    validateNode(next);
    next.content = clone(content);
    next.metadata = clone(next.metadata);
    list[i] = next;
    this.touch(sessionId);
    return clone(next);
  }

  async setHead(sessionId: string, nodeId: string | null): Promise<void> {
    const s = this.requireSession(sessionId);
    if (nodeId !== null) {
      assertId(nodeId, 'head');
      if (!this.nodes.get(sessionId)!.some((n) => n.id === nodeId)) {
        throw new EntityGitError(
          'NODE_NOT_FOUND',
          `no node ${JSON.stringify(nodeId)} in session ${JSON.stringify(sessionId)}`,
        );
      }
    }
    s.head = nodeId;
    this.touch(sessionId);
  }

  async createProject(input: {
    name: string;
    workdir: string;
    description?: string | null;
    id?: string;
  }): Promise<Project> {
    if (typeof input.name !== 'string' || input.name.trim() === '')
      throw new EntityGitError('INVALID_PROJECT', 'a project needs a name');
    if (typeof input.workdir !== 'string' || !isAbsolutePath(input.workdir)) {
      throw new EntityGitError('INVALID_WORKDIR', `workdir must be an absolute path: ${JSON.stringify(input.workdir)}`);
    }
    if ([...this.projects.values()].some((p) => p.name === input.name)) {
      throw new EntityGitError('DUPLICATE_PROJECT', `a project named ${JSON.stringify(input.name)} exists already`);
    }
    const id = input.id ?? `proj_${(this.projects.size + 1).toString(36)}_${Math.random().toString(36).slice(2, 10)}`;
    assertId(id, 'project id');
    if (this.projects.has(id))
      throw new EntityGitError('INVALID_PROJECT', `a project with id ${JSON.stringify(id)} exists already`);
    const project: Project = {
      id,
      name: input.name,
      workdir: input.workdir,
      status: 'active',
      description: input.description ?? null,
      created_at: this.clock(),
      sessions: [],
    };
    this.projects.set(id, project);
    return clone(project);
  }

  async listProjects(): Promise<Project[]> {
    return [...this.projects.values()].map((p) => this.withSessions(p));
  }

  async getProject(projectId: string): Promise<Project | null> {
    const p = this.projects.get(projectId);
    return p ? this.withSessions(p) : null;
  }

  async setProjectStatus(projectId: string, status: ProjectStatus): Promise<Project> {
    const p = this.projects.get(projectId);
    if (!p) throw new EntityGitError('PROJECT_NOT_FOUND', `no project ${JSON.stringify(projectId)}`);
    if (!PROJECT_STATUSES.includes(status))
      throw new EntityGitError('INVALID_PROJECT', `status must be one of ${PROJECT_STATUSES.join(', ')}`);
    p.status = status;
    return this.withSessions(p);
  }

  async addSessionToProject(projectId: string, sessionId: string): Promise<void> {
    if (!this.projects.has(projectId))
      throw new EntityGitError('PROJECT_NOT_FOUND', `no project ${JSON.stringify(projectId)}`);
    this.requireSession(sessionId).project_id = projectId;
    this.touch(sessionId);
  }

  async sessionsOfProject(projectId: string): Promise<string[]> {
    if (!this.projects.has(projectId))
      throw new EntityGitError('PROJECT_NOT_FOUND', `no project ${JSON.stringify(projectId)}`);
    return [...this.sessions.values()].filter((s) => s.project_id === projectId).map((s) => s.id);
  }

  async projectOfSession(sessionId: string): Promise<Project | null> {
    const pid = this.requireSession(sessionId).project_id;
    return pid ? this.getProject(pid) : null;
  }

  private withSessions(p: Project): Project {
    return clone({ ...p, sessions: [...this.sessions.values()].filter((s) => s.project_id === p.id).map((s) => s.id) });
  }

  private requireSession(sessionId: string): Session {
    const s = this.sessions.get(sessionId);
    if (!s) throw new EntityGitError('SESSION_NOT_FOUND', `no session ${JSON.stringify(sessionId)}`);
    return s;
  }
}
