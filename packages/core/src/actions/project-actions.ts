// The project actions: projects listed, shown, created and given a status, and a session added to one.
import { EntityGitError } from '@entity-git/git';
import type { DagSource } from '../dag/dag-source.js';
import type { ProjectStore } from '../dag/project-store.js';
import type { Mirror } from '../mirror/mirror.js';
import { isAbsolutePath } from '../model/is-absolute-path.js';
import { PROJECT_STATUSES, type Project, type ProjectStatus } from '../model/types.js';
import type { ProjectSummary, SessionSummary } from './action-types.js';
import type { Handlers } from './handlers.js';
import type { WorkdirPolicy } from './workdir-policy.js';
import { idParam, invalidArgument, optionalString, paramsObject, requireProject, requireSession } from './params.js';
import { sessionSummary } from './session-actions.js';

export interface ProjectActionsOptions {
  dag: DagSource;
  mirror: Mirror;
  /** Needed by the project actions. */
  projects?: ProjectStore;
  /** Checks and resolves a new project's workdir (Node: node-fs's `nodeWorkdirPolicy`). Default: none. */
  workdirPolicy?: WorkdirPolicy;
}

type ProjectActionName =
  | 'list_projects'
  | 'project_detail'
  | 'create_project'
  | 'add_session_to_project'
  | 'set_project_status';

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

export function projectActions(options: ProjectActionsOptions): Handlers<ProjectActionName> {
  const { dag } = options;
  const needProjects = (): ProjectStore => options.projects ?? invalidArgument('this server has no project store');
  return {
    async list_projects() {
      return { projects: (await needProjects().listProjects()).map(summary) };
    },
    async project_detail(params) {
      const projectId = idParam(paramsObject(params), 'project_id');
      const project = await requireProject(needProjects(), projectId);
      const details: SessionSummary[] = [];
      for (const id of project.sessions) {
        const s = await sessionSummary(options, id);
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
      const checked =
        options.workdirPolicy === undefined
          ? workdir
          : await options.workdirPolicy(workdir, await store.listProjects());
      const project = await store.createProject({ name, workdir: checked, description: description ?? null });
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
}
