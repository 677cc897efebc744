import type { DagSource } from '../dag/dag-source.js';
import type { ProjectStore } from '../dag/project-store.js';
import { EntityGitError, isOid } from '@entity-git/git';
import type { Project, Session } from '../model/types.js';
import { assertId, MAX_ID_BYTES } from '../model/names.js';

/**
 * Validation of action parameters, as core's handlers do it: a server that adds actions of its
 * own (examples/ws-server) validates them alike, with the same typed errors.
 */

/** Throw `INVALID_ARGUMENT`. */
export const invalidArgument = (message: string, data: Record<string, unknown> = {}): never => {
  throw new EntityGitError('INVALID_ARGUMENT', message, data);
};

/** A request's `params`: an object (absent counts as empty). */
export function paramsObject(params: unknown): Record<string, unknown> {
  if (params === undefined || params === null) return {};
  if (typeof params !== 'object' || Array.isArray(params)) invalidArgument('params must be an object');
  return params as Record<string, unknown>;
}

/** A non-empty id (session, node, project), checked as ids are (`INVALID_ID` when unsafe). */
export function idParam(p: Record<string, unknown>, key: string): string {
  const v = p[key];
  if (typeof v !== 'string' || v === '') invalidArgument(`${key} must be a non-empty string`, { param: key });
  assertId(v, key);
  return v as string;
}

/** An optional non-empty string (a branch name). */
export function optionalString(p: Record<string, unknown>, key: string): string | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v === '' || v.length > MAX_ID_BYTES)
    invalidArgument(`${key} must be a non-empty string`, { param: key });
  return v as string;
}

/** An optional integer from `min` to `max` (default the largest safe integer): a limit, a seq; `fallback` when absent. */
export function intParam(
  p: Record<string, unknown>,
  key: string,
  { fallback, min, max = Number.MAX_SAFE_INTEGER }: { fallback: number; min: number; max?: number },
): number {
  const v = p[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max)
    invalidArgument(`${key} must be an integer from ${min} to ${max}`, { param: key });
  return v as number;
}

/** The session, or `SESSION_NOT_FOUND`. */
export async function requireSession(dag: Pick<DagSource, 'getSession'>, sessionId: string): Promise<Session> {
  const s = await dag.getSession(sessionId);
  if (s === null)
    throw new EntityGitError('SESSION_NOT_FOUND', `no session ${JSON.stringify(sessionId)}`, { sessionId });
  return s;
}

/** The project, or `PROJECT_NOT_FOUND`. */
export async function requireProject(projects: Pick<ProjectStore, 'getProject'>, projectId: string): Promise<Project> {
  const project = await projects.getProject(projectId);
  if (project === null)
    throw new EntityGitError('PROJECT_NOT_FOUND', `no project ${JSON.stringify(projectId)}`, { projectId });
  return project;
}

/** A commit id: 40 lowercase hex digits. */
export function shaParam(p: Record<string, unknown>, key: string): string {
  const v = p[key];
  if (!isOid(v)) invalidArgument(`${key} must be 40 lowercase hex digits`, { param: key });
  return v as string;
}
