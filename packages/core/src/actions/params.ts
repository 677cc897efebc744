import { EntityGitError } from '../errors.js';
import { isOid } from '../git/objects.js';
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
  if (typeof v !== 'string' || v === '' || v.length > MAX_ID_BYTES) invalidArgument(`${key} must be a non-empty string`, { param: key });
  return v as string;
}

/** A commit id: 40 lowercase hex digits. */
export function shaParam(p: Record<string, unknown>, key: string): string {
  const v = p[key];
  if (!isOid(v)) invalidArgument(`${key} must be 40 lowercase hex digits`, { param: key });
  return v as string;
}
