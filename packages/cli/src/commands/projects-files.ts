// `entity-git projects diff SESSION TURN [PATH]` and `entity-git projects restore SESSION TURN
// [PATH] [--undo SNAPSHOT]`: a turn's files from the project's shadow snapshots (docs/design.md
// §7, "Shadow mode"): what the turn changed and who changed it, one file's diff, and the restore
// of its files, which skips a file someone else changed since.
import { join } from 'node:path';
import type { Project, RestoreResult } from '@entity-git/core';
import type { NodeShadowProjectGit } from '@entity-git/project/node';
import { CliError } from '../cli-error.js';
import { requireProjects, requireSession, type Context } from '../context.js';
import { EXIT_OK, type ExitCode } from '../exit-codes.js';
import { printJson, println, type CliIo } from '../io.js';
import { findProject } from './projects.js';

/** Where the CLI keeps shadow repositories: inside the session root (a session id never starts with a dot). */
export const shadowRoot = (ctx: Context) => join(ctx.root, '.shadow');

interface TurnArgs {
  session: string;
  turn: string;
  path?: string | undefined;
  project?: string | undefined;
  json: boolean;
}

async function open(
  ctx: Context,
  args: TurnArgs,
): Promise<{ project: Project; shadow: NodeShadowProjectGit; turn: number }> {
  await requireSession(ctx, args.session);
  if (!/^[1-9]\d{0,15}$/.test(args.turn))
    throw new CliError(`TURN must be a turn number (1, 2, …), got ${JSON.stringify(args.turn)}`);
  const project =
    args.project !== undefined
      ? await findProject(ctx, args.project)
      : await requireProjects(ctx).projectOfSession(args.session);
  if (project === null)
    throw new CliError(`session ${JSON.stringify(args.session)} is in no project (give --project PROJECT)`);
  const { createShadowProjectGit } = await import('@entity-git/project/node');
  return { project, shadow: createShadowProjectGit({ root: shadowRoot(ctx) }), turn: Number(args.turn) };
}

export async function runProjectsDiff(ctx: Context, io: CliIo, args: TurnArgs): Promise<ExitCode> {
  const { project, shadow, turn } = await open(ctx, args);
  const at = { workdir: project.workdir, sessionId: args.session, turn };
  if (args.path !== undefined) {
    const diff = await shadow.turnFileDiff({ ...at, path: args.path });
    if (args.json) printJson(io, { projectId: project.id, sessionId: args.session, turn, path: args.path, diff });
    else if (diff !== '') println(io, diff.replace(/\n$/, ''));
    return EXIT_OK;
  }
  const r = await shadow.listTurnFiles(at);
  if (args.json) {
    printJson(io, {
      projectId: project.id,
      sessionId: args.session,
      turn,
      before: r.before,
      after: r.after,
      files: r.files,
    });
    return EXIT_OK;
  }
  if (r.files.length === 0) println(io, `turn ${turn} changed no file`);
  for (const f of r.files) {
    const lines = f.added === null ? 'binary' : `+${f.added} -${f.removed}`;
    println(io, `${f.status.padEnd(12)} ${lines.padEnd(12)} ${f.by === 'tools' ? 'tools' : 'other'}  ${f.path}`);
  }
  return EXIT_OK;
}

export async function runProjectsRestore(
  ctx: Context,
  io: CliIo,
  args: TurnArgs & { undo?: string | undefined },
): Promise<ExitCode> {
  const { project, shadow, turn } = await open(ctx, args);
  let r: RestoreResult;
  if (args.undo !== undefined) {
    if (!/^[0-9a-f]{40}$/.test(args.undo))
      throw new CliError(
        `--undo needs the restore's snapshot id (40 lowercase hex digits), got ${JSON.stringify(args.undo)}`,
      );
    r = await shadow.undoRestore({ workdir: project.workdir, restored: args.undo });
  } else {
    const paths = args.path === undefined ? undefined : [args.path];
    r = await shadow.restoreTurnFiles({
      workdir: project.workdir,
      sessionId: args.session,
      turn,
      ...(paths ? { paths } : {}),
    });
  }
  if (args.json) {
    printJson(io, { projectId: project.id, sessionId: args.session, turn, ...r });
    return EXIT_OK;
  }
  for (const p of r.paths) println(io, `restored ${p}`);
  for (const s of r.skipped) println(io, `skipped  ${s.path} (${s.reason})`);
  println(io, `undo with: entity-git projects restore ${args.session} ${turn} --undo ${r.restored}`);
  return EXIT_OK;
}

/** `projects mode PROJECT [shadow|auto-commit]`: show the project's mode, or choose it. */
export async function runProjectsMode(
  ctx: Context,
  io: CliIo,
  args: { project: string; mode?: string | undefined; json: boolean },
): Promise<ExitCode> {
  const project = await findProject(ctx, args.project);
  const { createShadowProjectGit, PROJECT_MODES } = await import('@entity-git/project/node');
  const shadow = createShadowProjectGit({ root: shadowRoot(ctx) });
  let settings = await shadow.settings(project.workdir);
  if (args.mode !== undefined) {
    const mode = PROJECT_MODES.find((m) => m === args.mode);
    if (mode === undefined) throw new CliError(`MODE must be shadow or auto-commit, got ${JSON.stringify(args.mode)}`);
    settings = await shadow.configure(project.workdir, { mode });
  }
  if (args.json) printJson(io, { projectId: project.id, workdir: project.workdir, ...settings });
  else
    println(
      io,
      `${project.id} ${JSON.stringify(project.name)}: ${settings.mode} (files over ${settings.maxFileBytes} bytes left out of snapshots)`,
    );
  return EXIT_OK;
}
