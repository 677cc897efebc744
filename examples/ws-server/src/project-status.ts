// `project_status`: whether a project's workdir has uncommitted changes of the user's, read with
// the project git's read-only `inspect` (it writes nothing, anywhere: no shadow snapshot). The
// app asks it when a session bound to a project opens, so the design's warning shows before a
// turn is skipped, and asks again until the tree is clean.
import { requireProject, idParam, paramsObject, type ProjectGit, type ProjectStore } from '@entity-git/core';
import { UNCOMMITTED_CHANGES_WARNING } from '@entity-git/project';
import type { ProjectStatusResult } from './protocol.js';

/** At most this many of the user's paths go back to the client (the count is always whole). */
const MAX_PATHS = 50;

export function projectStatusAction(projects: ProjectStore, projectGit: ProjectGit | null) {
  return async (params: unknown): Promise<ProjectStatusResult> => {
    const projectId = idParam(paramsObject(params), 'project_id');
    const project = await requireProject(projects, projectId);
    if (projectGit === null) {
      return {
        project_id: projectId,
        workdir: project.workdir,
        status: project.status,
        state: 'unknown',
        dirty: false,
        user_paths: [],
        user_paths_count: 0,
        warning: null,
      };
    }
    const snap = await projectGit.inspect(project.workdir);
    // Any path of the user's blocks the next auto-commit (in no repository yet: the directory's entries).
    const dirty = snap.dirty.length > 0;
    return {
      project_id: projectId,
      workdir: project.workdir,
      status: project.status,
      state: snap.state,
      dirty,
      user_paths: dirty ? snap.dirty.slice(0, MAX_PATHS) : [],
      user_paths_count: dirty ? snap.dirty.length : 0,
      warning: dirty ? UNCOMMITTED_CHANGES_WARNING : null,
    };
  };
}
