// `import_projects`: the git repositories under a directory of the server's machine, each planned
// as a Project unless one has its workdir already. Without `apply` (the default) it only reports
// the plan — the dry run the app shows first; with `apply: true` it creates the planned projects.
// Either way nothing is written in the repositories (no `git init`, no commit). Every planned
// workdir goes through the same workdir policy as `create_project` (SECURITY.md): one it refuses
// is reported `refused` with the reason, and never created.
import { isEntityGitError, paramsObject, type Project, type ProjectStore, type WorkdirPolicy } from '@entity-git/core';
import { findGitRepositories, planProjectImport } from '@entity-git/node-fs';
import type { ImportProjectsResult } from './protocol.js';

type Candidate = ImportProjectsResult['candidates'][number];

export function importProjectsAction(projects: ProjectStore, policy: WorkdirPolicy) {
  return async (params: unknown): Promise<ImportProjectsResult> => {
    const p = paramsObject(params);
    const dir = p.dir as string;
    const apply = p.apply === true;
    const repos = await findGitRepositories(dir);
    const known = await projects.listProjects();
    const candidates: Candidate[] = [];
    for (const c of planProjectImport(repos, known)) {
      if (c.status !== 'new') {
        candidates.push(c);
        continue;
      }
      const checked = await checkWorkdir(c, known, policy);
      if (!apply || checked.status === 'refused') {
        candidates.push(checked);
        continue;
      }
      const created = await projects.createProject({ name: c.name, workdir: checked.workdir, description: null });
      known.push(created);
      candidates.push({ ...checked, status: 'created', project_id: created.id });
    }
    return { dir, applied: apply, candidates };
  };
}

/** The candidate with its workdir as the policy resolves it, or `refused` with the policy's reason. */
async function checkWorkdir(c: Candidate, known: Project[], policy: WorkdirPolicy): Promise<Candidate> {
  try {
    return { ...c, workdir: await policy(c.workdir, known) };
  } catch (err) {
    if (!isEntityGitError(err)) throw err;
    return { ...c, status: 'refused', reason: err.message };
  }
}
