// `entity-git projects status PROJECT [STATUS]`: read a project's status, or set it. A paused or
// done project gets no agent auto-commit (the mirror service skips it), so this is how a user
// stops the agent committing in a repository without unbinding its sessions.
import { PROJECT_STATUSES, type ProjectStatus } from '@entity-git/core';
import { CliError } from '../cli-error.js';
import { requireProjects, type Context } from '../context.js';
import { EXIT_OK, type ExitCode } from '../exit-codes.js';
import { printJson, println, type CliIo } from '../io.js';
import { projectJson, type ProjectOneJson } from '../json-shapes.js';
import { findProject } from './projects.js';

export async function runProjectsStatus(
  ctx: Context,
  io: CliIo,
  args: { project: string; status?: string | undefined; json: boolean },
): Promise<ExitCode> {
  const project = await findProject(ctx, args.project);
  let after = project;
  if (args.status !== undefined) {
    if (!(PROJECT_STATUSES as readonly string[]).includes(args.status)) {
      throw new CliError(`STATUS must be one of ${PROJECT_STATUSES.join(', ')}, got ${JSON.stringify(args.status)}`);
    }
    after = await requireProjects(ctx).setProjectStatus(project.id, args.status as ProjectStatus);
  }
  if (args.json) printJson(io, { project: projectJson(after) } satisfies ProjectOneJson);
  else if (args.status === undefined)
    println(io, `project ${after.id} ${JSON.stringify(after.name)} is ${after.status}`);
  else println(io, `project ${after.id} ${JSON.stringify(after.name)}: ${project.status} → ${after.status}`);
  return EXIT_OK;
}
