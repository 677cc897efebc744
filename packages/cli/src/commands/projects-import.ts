// `entity-git projects import DIR [--apply]`: the design's migration step, existing git projects
// imported as Projects. Without --apply it prints the plan and writes nothing (a dry run first);
// with --apply it creates the planned projects. No repository is ever written to.
import { isEntityGitError } from '@entity-git/core';
import { findGitRepositories, planProjectImport, type ImportCandidate } from '@entity-git/node-fs';
import { CliError } from '../cli-error.js';
import { requireProjects, type Context } from '../context.js';
import { EXIT_OK, type ExitCode } from '../exit-codes.js';
import { printJson, println, type CliIo } from '../io.js';

export interface ProjectsImportJson {
  dir: string;
  applied: boolean;
  candidates: Array<Omit<ImportCandidate, 'status'> & { status: ImportCandidate['status'] | 'created' }>;
}

export async function runProjectsImport(
  ctx: Context,
  io: CliIo,
  args: { dir: string; apply: boolean; json: boolean },
): Promise<ExitCode> {
  let repos: string[];
  try {
    repos = await findGitRepositories(args.dir);
  } catch (err) {
    if (isEntityGitError(err, 'INVALID_WORKDIR'))
      throw new CliError(
        `DIR must be an existing directory given as an absolute path, got ${JSON.stringify(args.dir)}`,
      );
    throw err;
  }
  const plan = planProjectImport(repos, await requireProjects(ctx).listProjects());
  const candidates: ProjectsImportJson['candidates'] = [];
  for (const c of plan) {
    if (!args.apply || c.status !== 'new') {
      candidates.push(c);
      continue;
    }
    const created = await requireProjects(ctx).createProject({ name: c.name, workdir: c.workdir, description: null });
    candidates.push({ ...c, status: 'created', project_id: created.id });
  }
  if (args.json) {
    printJson(io, { dir: args.dir, applied: args.apply, candidates } satisfies ProjectsImportJson);
    return EXIT_OK;
  }
  if (candidates.length === 0) println(io, `no git repository under ${args.dir}`);
  for (const c of candidates) {
    const what =
      c.status === 'exists'
        ? `already project ${c.project_id}`
        : c.status === 'created'
          ? `created project ${c.project_id}`
          : 'would create';
    println(io, `${what}  ${JSON.stringify(c.name)}  ${c.workdir}`);
  }
  const fresh = candidates.filter((c) => c.status === 'new').length;
  if (!args.apply && fresh > 0)
    println(io, `dry run: nothing written; run again with --apply to create ${fresh} project${fresh === 1 ? '' : 's'}`);
  return EXIT_OK;
}
