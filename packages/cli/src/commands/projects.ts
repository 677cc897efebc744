import { isAbsolute } from 'node:path';
import type { Project } from '@entity-git/core';
import { CliError } from '../cli-error.js';
import { requireProjects, requireSession, type Context } from '../context.js';
import { EXIT_INTERNAL, EXIT_OK, type ExitCode } from '../exit-codes.js';
import { printJson, println, type CliIo } from '../io.js';
import { projectJson, type ProjectOneJson, type ProjectsJson } from '../json-shapes.js';

export async function runProjectsList(ctx: Context, io: CliIo, args: { json: boolean }): Promise<ExitCode> {
  const projects = await requireProjects(ctx).listProjects();
  if (args.json) {
    printJson(io, { projects: projects.map(projectJson) } satisfies ProjectsJson);
    return EXIT_OK;
  }
  if (projects.length === 0) println(io, 'no projects');
  for (const p of projects) {
    println(
      io,
      `${p.id}  ${p.name}  [${p.status}]  ${p.workdir}  ${p.sessions.length} session${p.sessions.length === 1 ? '' : 's'}`,
    );
  }
  return EXIT_OK;
}

export async function runProjectsCreate(
  ctx: Context,
  io: CliIo,
  args: { name: string; workdir: string; description?: string | undefined; json: boolean },
): Promise<ExitCode> {
  // The workdir is stored as given and later used by another process (the agent's), whose
  // current directory is not ours: a relative path would mean something else there.
  if (!isAbsolute(args.workdir))
    throw new CliError(
      `WORKDIR must be an absolute path, got ${JSON.stringify(args.workdir)} (try "$PWD/${args.workdir}")`,
    );
  const project = await requireProjects(ctx).createProject({
    name: args.name,
    workdir: args.workdir,
    description: args.description ?? null,
  });
  if (args.json) printJson(io, { project: projectJson(project) } satisfies ProjectOneJson);
  else println(io, `created project ${project.id} ${JSON.stringify(project.name)} at ${project.workdir}`);
  return EXIT_OK;
}

export async function runProjectsAddSession(
  ctx: Context,
  io: CliIo,
  args: { project: string; session: string; json: boolean },
): Promise<ExitCode> {
  const project = await findProject(ctx, args.project);
  await requireSession(ctx, args.session);
  await requireProjects(ctx).addSessionToProject(project.id, args.session);
  const after = (await requireProjects(ctx).getProject(project.id)) ?? project;
  if (args.json) printJson(io, { project: projectJson(after) } satisfies ProjectOneJson);
  else println(io, `added session ${args.session} to project ${after.id} ${JSON.stringify(after.name)}`);
  return EXIT_OK;
}

/** PROJECT is an id, or else a name (names are unique). */
export async function findProject(ctx: Context, key: string): Promise<Project> {
  const byId = await requireProjects(ctx).getProject(key);
  if (byId) return byId;
  const byName = (await requireProjects(ctx).listProjects()).find((p) => p.name === key);
  if (byName) return byName;
  throw new CliError(`no project with id or name ${JSON.stringify(key)}`);
}

/** One agent commit in a project's repository, as `log --project --json` prints it. */
export interface ProjectCommitJson {
  sha: string;
  subject: string;
  committer: string;
  /** Committer time, seconds since the epoch. */
  time: number;
  /** From the trailers (escaped as in session trailers); null when absent. */
  session: string | null;
  turn: number | null;
  sessionCommit: string | null;
}

export interface ProjectLogJson {
  projectId: string;
  workdir: string;
  commits: ProjectCommitJson[];
}

/**
 * The agent's auto-commits in a project's own repository: commits whose subject starts with
 * `[agent ` and whose committer is `agent (… via …)`, newest first, read with native git.
 */
export async function runProjectLog(
  ctx: Context,
  io: CliIo,
  args: { project: string; json: boolean },
): Promise<ExitCode> {
  const project = await findProject(ctx, args.project);
  const { execFileSync } = await import('node:child_process');
  let out = '';
  try {
    out = execFileSync(
      'git',
      [
        'log',
        '--no-color',
        '--grep=^\\[agent ',
        '--committer=^agent (',
        `--format=%H%x1f%s%x1f%cn%x1f%ct%x1f%(trailers:key=Session,valueonly,separator=%x20)%x1f%(trailers:key=Turn,valueonly,separator=%x20)%x1f%(trailers:key=Session-Commit,valueonly,separator=%x20)%x1e`,
      ],
      {
        cwd: project.workdir,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        maxBuffer: 1 << 28,
      },
    );
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? '');
    // No repository yet, or one without commits: nothing the agent committed.
    if (
      !/not a git repository|does not have any commits|unknown revision|No such file/i.test(stderr) &&
      (err as NodeJS.ErrnoException).code !== 'ENOENT'
    ) {
      throw new CliError(
        `git log failed in ${project.workdir}: ${stderr.trim().split('\n')[0] ?? (err as Error).message}`,
        EXIT_INTERNAL,
      );
    }
  }
  const commits: ProjectCommitJson[] = out
    .split('\x1e')
    .map((r) => r.replace(/^\n/, ''))
    .filter((r) => r !== '')
    .map((r) => {
      const [sha, subject, committer, time, session, turn, sessionCommit] = r.split('\x1f');
      return {
        sha: sha!,
        subject: subject!,
        committer: committer!,
        time: Number(time),
        session: session?.trim() || null,
        turn: turn?.trim() ? Number(turn.trim()) : null,
        sessionCommit: sessionCommit?.trim() || null,
      };
    });
  if (args.json) {
    printJson(io, { projectId: project.id, workdir: project.workdir, commits } satisfies ProjectLogJson);
    return EXIT_OK;
  }
  if (commits.length === 0) println(io, `project ${project.name} has no agent commit yet`);
  for (const c of commits)
    println(io, `${c.sha.slice(0, 10)} ${new Date(c.time * 1000).toISOString().replace('.000Z', 'Z')} ${c.subject}`);
  return EXIT_OK;
}
