import { EntityGitError, MAX_ID_BYTES, ROLES, type JsonValue, type Role, type Session } from '@entity-git/core';
import type { StoredMessage } from './message-nodes.js';
import { isObject } from './stored-content.js';
import { storedSeconds } from './stored-time.js';

/** The `agent_id` of every session read from Mastra's storage. */
export const MASTRA_AGENT = 'mastra';

/** The text form of `createdAt` each query selects beside the row's columns (the page cursor). */
export const CREATED_TEXT = 'entity_git_created';

type Row = Record<string, unknown>;
const encoder = new TextEncoder();

/**
 * A `mastra_threads` row as a session: `title`, `agent_id` {@link MASTRA_AGENT}, `created_at`
 * the thread's, `metadata` `{ resourceId, metadata }` (the latter only when the thread has any).
 * Model, project and head are null: a thread has no such fields, and HEAD follows the newest leaf.
 */
export function threadSession(row: Row, table: string): Session {
  const id = rowId(row, (why, bad) => unreadable(table, bad, null, why));
  const created = createdSeconds(row);
  if (created === null) throw unreadable(table, id, null, 'createdAt is not a time');
  const metadata: { [key: string]: JsonValue } = {
    resourceId: typeof row.resourceId === 'string' ? row.resourceId : null,
  };
  const own = jsonColumn(row.metadata);
  if (own !== null) metadata.metadata = own;
  return {
    id,
    title: typeof row.title === 'string' ? row.title : null,
    agent_id: MASTRA_AGENT,
    model: null,
    project_id: null,
    head: null,
    created_at: created,
    metadata,
  };
}

/** A `mastra_messages` row, checked: an id, a role of the DAG, a time. */
export function storedMessage(row: Row, table: string, threadId: string): StoredMessage {
  const id = rowId(row, (why, bad) => unreadable(table, threadId, bad, why));
  const role = row.role;
  if (typeof role !== 'string' || !ROLES.includes(role as Role))
    throw unreadable(table, threadId, id, `role ${JSON.stringify(role)} is none of ${ROLES.join(', ')}`);
  const createdAt = createdSeconds(row);
  if (createdAt === null) throw unreadable(table, threadId, id, 'createdAt is not a time');
  return {
    id,
    threadId,
    role: role as Role,
    content: row.content,
    type: typeof row.type === 'string' ? row.type : null,
    resourceId: typeof row.resourceId === 'string' ? row.resourceId : null,
    createdAt,
  };
}

/**
 * A row's time: `createdAtZ` where the table has it (Mastra's PostgreSQL store writes the instant
 * there and the writer's local wall-clock time in `createdAt`), else `createdAt` (text in libSQL;
 * a PostgreSQL `timestamp` read as UTC wall-clock time).
 */
function createdSeconds(row: Row): number | null {
  if (row.createdAtZ !== undefined && row.createdAtZ !== null) return storedSeconds(row.createdAtZ);
  return storedSeconds(row.createdAt instanceof Date ? row.createdAt : (row[CREATED_TEXT] ?? row.createdAt), true);
}

/** A JSON column: JSON text parsed (text that is not JSON kept as a string), a parsed value as it is. */
export function jsonColumn(value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') {
    try {
      return JSON.parse(value) as JsonValue;
    } catch {
      return value;
    }
  }
  // A json/jsonb column comes parsed; anything else a driver makes (a Date, a Buffer) as its text.
  return isObject(value) && Object.getPrototypeOf(value) === Object.prototype
    ? value
    : Array.isArray(value) || typeof value !== 'object'
      ? (value as JsonValue)
      : String(value);
}

function rowId(row: Row, refuse: (why: string, id: string | null) => EntityGitError): string {
  const id = row.id;
  if (typeof id !== 'string' || id === '' || encoder.encode(id).length > MAX_ID_BYTES)
    throw refuse(`its id is empty, not text or over ${MAX_ID_BYTES} bytes`, typeof id === 'string' ? id : null);
  return id;
}

function unreadable(table: string, threadId: string | null, messageId: string | null, why: string): EntityGitError {
  const which = messageId === null ? `thread ${JSON.stringify(threadId)}` : `message ${JSON.stringify(messageId)}`;
  return new EntityGitError('DB_ERROR', `[mastra] a row of ${table} cannot be read (${which}): ${why}`, {
    table,
    threadId,
    messageId,
  });
}
