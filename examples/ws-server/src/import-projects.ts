// `import_projects`: the git repositories under a directory of the server's machine, each planned
// as a Project unless one has its workdir already. Without `apply` (the default) it only reports
// the plan — the dry run the app shows first; with `apply: true` it creates the planned projects.
// Either way nothing is written in the repositories (no `git init`, no commit).
import { paramsObject, type ProjectStore } from '@entity-git/core';
import { findGitRepositories, planProjectImport } from '@entity-git/node-fs';
import type { ImportProjectsResult } from './protocol.js';

export function importProjectsAction(projects: ProjectStore) {
  return async (params: unknown): Promise<ImportProjectsResult> => {
    const p = paramsObject(params);
    const dir = p.dir as string;
    const apply = p.apply === true;
    const repos = await findGitRepositories(dir);
    const plan = planProjectImport(repos, await projects.listProjects());
    if (!apply) return { dir, applied: false, candidates: plan };
    const candidates: ImportProjectsResult['candidates'] = [];
    for (const c of plan) {
      if (c.status !== 'new') {
        candidates.push(c);
        continue;
      }
      const created = await projects.createProject({ name: c.name, workdir: c.workdir, description: null });
      candidates.push({ ...c, status: 'created', project_id: created.id });
    }
    return { dir, applied: true, candidates };
  };
}
