import { EntityGitError, type DagNode, type JsonValue, type Project, type Session } from '@entity-git/core';
import { PREFIX } from './errors.js';
import { MAX_BATCH_SIZE, type NodeRow, type ProjectRow, type SessionRow, type Tx } from './idb-schema.js';

export const encode = (v: JsonValue): string => JSON.stringify(v);
export const decode = (text: string): JsonValue => JSON.parse(text) as JsonValue;

/** A first revision no other database's session is likely to share (one of 2^48). */
export const firstRev = (): number => Math.floor(Math.random() * 2 ** 48);
export const nextRev = (row: SessionRow): number => (row.rev === undefined ? firstRev() : row.rev + 1);

/** Bump the marker of each session in `ids` (inside the write that changed them). */
export async function bumpRevs(
  sessions: { get(id: string): Promise<SessionRow | undefined>; put(row: SessionRow): Promise<unknown> },
  ids: Iterable<string>,
): Promise<void> {
  for (const id of ids) {
    const row = await sessions.get(id);
    if (row) await sessions.put({ ...row, rev: nextRev(row) });
  }
}

export function sessionOf(r: SessionRow): Session {
  return {
    id: r.id,
    title: r.title,
    agent_id: r.agent_id,
    model: r.model,
    project_id: r.project_id,
    head: r.head,
    created_at: r.created_at,
    metadata: decode(r.metadata),
  };
}

export function nodeOf(r: NodeRow): DagNode {
  return {
    id: r.id,
    session_id: r.session_id,
    seq: r.seq,
    role: r.role,
    content: decode(r.content),
    predecessor: r.predecessor,
    caller: r.caller,
    created_at: r.created_at,
    metadata: decode(r.metadata),
  };
}

export function rowOf(n: DagNode): NodeRow {
  return {
    session_id: n.session_id,
    seq: n.seq,
    id: n.id,
    role: n.role,
    content: encode(n.content),
    predecessor: n.predecessor,
    caller: n.caller,
    created_at: n.created_at,
    metadata: encode(n.metadata),
  };
}

export function checkBatchSize(n: unknown): number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > MAX_BATCH_SIZE) {
    throw new EntityGitError('INVALID_OPTION', `${PREFIX} batchSize must be an integer from 1 to ${MAX_BATCH_SIZE}`, {
      batchSize: n,
    });
  }
  return n;
}

export const sessionNotFound = (id: unknown) =>
  new EntityGitError('SESSION_NOT_FOUND', `${PREFIX} no session ${JSON.stringify(id)}`, { sessionId: id });
export const nodeNotFound = (sessionId: unknown, nodeId: unknown) =>
  new EntityGitError(
    'NODE_NOT_FOUND',
    `${PREFIX} no node ${JSON.stringify(nodeId)} in session ${JSON.stringify(sessionId)}`,
    { sessionId, nodeId },
  );
export const projectNotFound = (id: unknown) =>
  new EntityGitError('PROJECT_NOT_FOUND', `${PREFIX} no project ${JSON.stringify(id)}`, { projectId: id });
export const duplicateId = (id: string) =>
  new EntityGitError('DAG_DUPLICATE_ID', `${PREFIX} node ${JSON.stringify(id)} exists already`, { nodeId: id });

export function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(9));
  return `proj_${Array.from(bytes, (b) => (b % 36).toString(36)).join('')}`;
}

export function projectOf(r: ProjectRow, sessions: string[]): Project {
  return {
    id: r.id,
    name: r.name,
    workdir: r.workdir,
    status: r.status,
    description: r.description,
    created_at: r.created_at,
    sessions,
  };
}

/** A project's session ids, oldest first. */
export async function sessionIds(tx: Tx<['projects', 'sessions']>, projectId: string): Promise<string[]> {
  const rows = await tx.objectStore('sessions').index('by_project').getAll(projectId);
  return rows.sort((a, b) => a.ord - b.ord).map((r) => r.id);
}
