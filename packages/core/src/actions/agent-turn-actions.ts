// The undo of an agent turn as actions: the session's agent commits in its project, and the undo
// of one (docs/project-git.md, "Undo"). Validated at the edge like the other handlers.
import { EntityGitError } from '@entity-git/git';
import type { DagSource } from '../dag/dag-source.js';
import type { ProjectStore } from '../dag/project-store.js';
import type { Project } from '../model/types.js';
import type { ProjectGit } from '../project-seam.js';
import type { AgentCommitsListResult, RevertAgentTurnResult } from './action-types.js';
import {
  idParam,
  intParam,
  invalidArgument,
  paramsObject,
  requireProject,
  requireSession,
  shaParam,
} from './params.js';

export interface AgentTurnActionsOptions {
  dag: DagSource;
  projects?: ProjectStore;
  projectGit?: Pick<ProjectGit, 'revertAgentTurn' | 'agentCommits'>;
}

export function agentTurnActions(options: AgentTurnActionsOptions) {
  const { dag } = options;
  const needProjectGit = () =>
    options.projectGit ?? invalidArgument('this server does not run the project auto-commit (no projectGit)');

  /**
   * The session (checked) and the project its agent commits are in: the one it is bound to. A
   * `project_id` must name that project (`SESSION_NOT_IN_PROJECT` otherwise): an undo never acts
   * in a repository the session's agent was not given.
   */
  async function target(p: Record<string, unknown>): Promise<{ sessionId: string; project: Project }> {
    const sessionId = idParam(p, 'session_id');
    await requireSession(dag, sessionId);
    const projects = options.projects ?? invalidArgument('this server has no project store');
    const named = p.project_id === undefined || p.project_id === null ? null : idParam(p, 'project_id');
    if (named !== null) await requireProject(projects, named);
    const project = await projects.projectOfSession(sessionId);
    if (project === null)
      throw new EntityGitError('PROJECT_NOT_FOUND', `session ${JSON.stringify(sessionId)} is in no project`, {
        sessionId,
      });
    if (named !== null && named !== project.id)
      throw new EntityGitError(
        'SESSION_NOT_IN_PROJECT',
        `session ${JSON.stringify(sessionId)} is bound to project ${JSON.stringify(project.name)}, not ${JSON.stringify(named)}`,
        { sessionId, projectId: named, boundTo: project.id },
      );
    return { sessionId, project };
  }

  return {
    async revert_agent_turn(params: unknown): Promise<RevertAgentTurnResult> {
      const p = paramsObject(params);
      const projectGit = needProjectGit();
      const turn = p.turn === undefined || p.turn === null ? null : intParam(p, 'turn', { fallback: 0, min: 1 });
      const commit = p.commit === undefined || p.commit === null ? null : shaParam(p, 'commit');
      if (turn === null && commit === null) invalidArgument('give turn or commit', { param: 'turn' });
      const { sessionId, project } = await target(p);
      const r = await projectGit.revertAgentTurn({
        workdir: project.workdir,
        sessionId,
        ...(turn === null ? {} : { turn }),
        ...(commit === null ? {} : { commit }),
      });
      return {
        kind: r.kind,
        project_id: project.id,
        workdir: project.workdir,
        session_id: sessionId,
        turn: r.turn,
        commit: r.commit,
        branch: r.branch,
        head: r.kind === 'already-reverted' ? null : r.head,
        revert_commit: r.kind === 'reset' ? null : r.revertCommit,
        by: r.kind === 'already-reverted' ? r.by : null,
        paths: [...r.paths],
        message: r.message,
      };
    },
    async project_agent_commits(params: unknown): Promise<AgentCommitsListResult> {
      const projectGit = needProjectGit();
      const { sessionId, project } = await target(paramsObject(params));
      const r = await projectGit.agentCommits({ workdir: project.workdir, sessionId });
      return {
        project_id: project.id,
        workdir: project.workdir,
        session_id: sessionId,
        branch: r.branch,
        commits: r.commits.map((c) => ({
          commit: c.commit,
          turn: c.turn,
          subject: c.subject,
          session_commit: c.sessionCommit,
          undone: c.undone?.by ?? null,
          revert_commit: c.undone?.by === 'revert' ? c.undone.revertCommit : null,
        })),
      };
    },
  };
}
