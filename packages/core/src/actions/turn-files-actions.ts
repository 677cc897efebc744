// A turn's files as actions: what the turn changed, one file's diff, and the restore of its files
// (docs/design.md §7, "Shadow mode"), over whatever `turnFiles` the server was given (the
// shadow snapshots of `@entity-git/project/node`). Validated at the edge like the other handlers.
import { EntityGitError } from '@entity-git/git';
import type { DagSource } from '../dag/dag-source.js';
import type { ProjectStore } from '../dag/project-store.js';
import type { Project } from '../model/types.js';
import type { RestoreResult, TurnFile, TurnFilesSource } from '../turn-files-seam.js';
import {
  idParam,
  intParam,
  invalidArgument,
  optionalString,
  paramsObject,
  requireProject,
  requireSession,
  shaParam,
} from './params.js';

export interface TurnFilesActionsOptions {
  dag: DagSource;
  projects?: ProjectStore;
  turnFiles?: TurnFilesSource;
}

interface TurnTarget {
  project_id: string;
  session_id: string;
  turn: number;
}

/** `list_turn_files`: the paths a turn changed, their added and removed lines, and who changed each. */
export interface TurnFilesListResult extends TurnTarget {
  workdir: string;
  before: string;
  after: string;
  session_commit: string | null;
  files: TurnFile[];
}

/** `turn_file_diff`: one file's unified diff across the turn (`''` when it did not change it). */
export interface TurnFileDiffResult extends TurnTarget {
  path: string;
  diff: string;
}

/** `restore_turn_files` and `undo_restore_turn_files`: what was put back and what was skipped. */
export interface RestoreTurnFilesResult {
  project_id: string;
  restore_point: string;
  restored: string;
  paths: string[];
  skipped: { path: string; reason: RestoreResult['skipped'][number]['reason'] }[];
}

export function turnFilesActions(options: TurnFilesActionsOptions) {
  const needTurnFiles = () =>
    options.turnFiles ?? invalidArgument('this server keeps no shadow snapshots (no turnFiles)');

  async function projectOf(p: Record<string, unknown>, sessionId: string): Promise<Project> {
    const projects = options.projects ?? invalidArgument('this server has no project store');
    if (p.project_id !== undefined && p.project_id !== null) return requireProject(projects, idParam(p, 'project_id'));
    const project = await projects.projectOfSession(sessionId);
    if (project === null)
      throw new EntityGitError('PROJECT_NOT_FOUND', `session ${JSON.stringify(sessionId)} is in no project`, {
        sessionId,
      });
    return project;
  }

  async function target(params: unknown) {
    const p = paramsObject(params);
    const turnFiles = needTurnFiles();
    const sessionId = idParam(p, 'session_id');
    const turn = intParam(p, 'turn', { fallback: 0, min: 1 });
    await requireSession(options.dag, sessionId);
    const project = await projectOf(p, sessionId);
    return { p, turnFiles, project, at: { workdir: project.workdir, sessionId, turn } };
  }

  const restoreJson = (project: Project, r: RestoreResult): RestoreTurnFilesResult => ({
    project_id: project.id,
    restore_point: r.restorePoint,
    restored: r.restored,
    paths: [...r.paths],
    skipped: r.skipped.map((s) => ({ ...s })),
  });

  return {
    async list_turn_files(params: unknown): Promise<TurnFilesListResult> {
      const { turnFiles, project, at } = await target(params);
      const r = await turnFiles.listTurnFiles(at);
      return {
        project_id: project.id,
        workdir: project.workdir,
        session_id: at.sessionId,
        turn: at.turn,
        before: r.before,
        after: r.after,
        session_commit: r.sessionCommit,
        files: r.files.map((f) => ({ ...f })),
      };
    },
    async turn_file_diff(params: unknown): Promise<TurnFileDiffResult> {
      const { p, turnFiles, project, at } = await target(params);
      const path = optionalString(p, 'path') ?? invalidArgument('path is required', { param: 'path' });
      const diff = await turnFiles.turnFileDiff({ ...at, path });
      return { project_id: project.id, session_id: at.sessionId, turn: at.turn, path, diff };
    },
    async restore_turn_files(params: unknown): Promise<RestoreTurnFilesResult> {
      const { p, turnFiles, project, at } = await target(params);
      const paths = p.paths === undefined || p.paths === null ? undefined : pathList(p.paths);
      return restoreJson(project, await turnFiles.restoreTurnFiles({ ...at, ...(paths ? { paths } : {}) }));
    },
    async undo_restore_turn_files(params: unknown): Promise<RestoreTurnFilesResult> {
      const p = paramsObject(params);
      const turnFiles = needTurnFiles();
      const sessionId = idParam(p, 'session_id');
      await requireSession(options.dag, sessionId);
      const project = await projectOf(p, sessionId);
      const restored = shaParam(p, 'restored');
      return restoreJson(project, await turnFiles.undoRestore({ workdir: project.workdir, restored }));
    },
  };
}

function pathList(v: unknown): string[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' && x.length > 0))
    return invalidArgument('paths must be a list of workdir-relative paths', { param: 'paths' });
  return v as string[];
}
