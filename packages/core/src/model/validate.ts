import { EntityGitError } from '@entity-git/git';
import { assertJson } from './canonical-json.js';
import { assertId } from './names.js';
import { ROLES, type DagNode, type Session } from './types.js';

/** Checks a node at the boundary; throws `INVALID_NODE`, `INVALID_ID` or `NON_JSON_VALUE`. */
export function validateNode(node: unknown): asserts node is DagNode {
  if (typeof node !== 'object' || node === null) throw new EntityGitError('INVALID_NODE', 'a node must be an object');
  const n = node as Record<string, unknown>;
  assertId(n.id, 'node id');
  assertId(n.session_id, 'session id');
  const where = { nodeId: n.id };
  if (typeof n.seq !== 'number' || !Number.isSafeInteger(n.seq) || n.seq < 1) {
    throw new EntityGitError('INVALID_NODE', `node ${JSON.stringify(n.id)}: seq must be a positive integer`, where);
  }
  if (!ROLES.includes(n.role as never)) {
    throw new EntityGitError(
      'INVALID_NODE',
      `node ${JSON.stringify(n.id)}: role must be one of ${ROLES.join(', ')}`,
      where,
    );
  }
  for (const edge of ['predecessor', 'caller'] as const) {
    if (n[edge] !== null) assertId(n[edge], `node ${JSON.stringify(n.id)} ${edge}`);
  }
  if (typeof n.created_at !== 'number' || !Number.isFinite(n.created_at)) {
    throw new EntityGitError(
      'INVALID_NODE',
      `node ${JSON.stringify(n.id)}: created_at must be a finite number of seconds`,
      where,
    );
  }
  assertJson(n.content, 'content');
  assertJson(n.metadata, 'metadata');
}

/**
 * A session row from a writer's partial input: absent fields null, `created_at` from `now`;
 * validated (`INVALID_SESSION`, `INVALID_ID`, `NON_JSON_VALUE`).
 */
export function sessionRow(input: Partial<Session> & { id: string }, now: () => number): Session {
  if (typeof input !== 'object' || input === null)
    throw new EntityGitError('INVALID_SESSION', 'a session must be an object');
  const session: Session = {
    id: input.id,
    title: input.title ?? null,
    agent_id: input.agent_id ?? null,
    model: input.model ?? null,
    project_id: input.project_id ?? null,
    head: input.head ?? null,
    created_at: input.created_at ?? now(),
    metadata: input.metadata ?? null,
  };
  validateSession(session);
  return session;
}

/** Checks a session row at the boundary; throws `INVALID_SESSION`, `INVALID_ID` or `NON_JSON_VALUE`. */
export function validateSession(session: unknown): asserts session is Session {
  if (typeof session !== 'object' || session === null)
    throw new EntityGitError('INVALID_SESSION', 'a session must be an object');
  const s = session as Record<string, unknown>;
  assertId(s.id, 'session id');
  for (const key of ['title', 'agent_id', 'model', 'project_id'] as const) {
    if (s[key] !== null && typeof s[key] !== 'string') {
      throw new EntityGitError('INVALID_SESSION', `session ${JSON.stringify(s.id)}: ${key} must be a string or null`);
    }
  }
  if (s.head !== null) assertId(s.head, 'session head');
  if (typeof s.created_at !== 'number' || !Number.isFinite(s.created_at)) {
    throw new EntityGitError('INVALID_SESSION', `session ${JSON.stringify(s.id)}: created_at must be a finite number`);
  }
  assertJson(s.metadata, 'metadata');
}
