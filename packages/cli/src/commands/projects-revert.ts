// `entity-git projects revert SESSION TURN [--commit SHA] [--project PROJECT]`: undo what the agent
// committed for a turn in the session's project (docs/project-git.md, "Undo"): the branch moved
// back over the agent's commit when it is the unpushed tip of a clean tree, else a revert commit;
// refused, with nothing touched, when that cannot be done safely.
import type { RevertResult } from '@entity-git/core';
import { CliError } from '../cli-error.js';
import { requireProjects, requireSession, type Context } from '../context.js';
import { EXIT_OK, type ExitCode } from '../exit-codes.js';
import { printJson, println, type CliIo } from '../io.js';
import { findProject } from './projects.js';

/** `projects revert --json`: what the undo did. */
export interface ProjectRevertJson {
  /** `reset`, `reverted`, or `already-reverted` (nothing done). */
  kind: RevertResult['kind'];
  projectId: string;
  workdir: string;
  sessionId: string;
  turn: number;
  /** The agent's commit taken back. */
  commit: string;
  /** The full ref (`refs/heads/main`). */
  branch: string;
  /** HEAD after the undo; null when nothing was done. */
  head: string | null;
  /** The revert commit made or found; null for a reset. */
  revertCommit: string | null;
  /** For `already-reverted`: `reset`, `revert` or `content`; else null. */
  by: 'reset' | 'revert' | 'content' | null;
  /** Paths restored to their version before the agent's commit. */
  paths: string[];
  message: string;
}

export async function runProjectsRevert(
  ctx: Context,
  io: CliIo,
  args: {
    session: string;
    turn?: string | undefined;
    commit?: string | undefined;
    project?: string | undefined;
    json: boolean;
  },
): Promise<ExitCode> {
  await requireSession(ctx, args.session);
  if (args.turn === undefined && args.commit === undefined)
    throw new CliError('projects revert: give TURN, or --commit SHA (see: entity-git projects revert --help)');
  if (args.turn !== undefined && !/^[1-9]\d{0,15}$/.test(args.turn))
    throw new CliError(`TURN must be a turn number (1, 2, …), got ${JSON.stringify(args.turn)}`);
  if (args.commit !== undefined && !/^[0-9a-f]{40}$/.test(args.commit))
    throw new CliError(`--commit needs a full commit id (40 lowercase hex digits), got ${JSON.stringify(args.commit)}`);
  const project =
    args.project !== undefined
      ? await findProject(ctx, args.project)
      : await requireProjects(ctx).projectOfSession(args.session);
  if (project === null)
    throw new CliError(`session ${JSON.stringify(args.session)} is in no project (give --project PROJECT)`);
  const { createNodeProjectGit } = await import('@entity-git/project/node');
  const r = await createNodeProjectGit().revertAgentTurn({
    workdir: project.workdir,
    sessionId: args.session,
    ...(args.turn === undefined ? {} : { turn: Number(args.turn) }),
    ...(args.commit === undefined ? {} : { commit: args.commit }),
  });
  if (args.json) {
    printJson(io, {
      kind: r.kind,
      projectId: project.id,
      workdir: project.workdir,
      sessionId: args.session,
      turn: r.turn,
      commit: r.commit,
      branch: r.branch,
      head: r.kind === 'already-reverted' ? null : r.head,
      revertCommit: r.kind === 'reset' ? null : r.revertCommit,
      by: r.kind === 'already-reverted' ? r.by : null,
      paths: [...r.paths],
      message: r.message,
    } satisfies ProjectRevertJson);
    return EXIT_OK;
  }
  println(io, r.message);
  for (const p of r.paths) println(io, `  restored ${p}`);
  return EXIT_OK;
}
