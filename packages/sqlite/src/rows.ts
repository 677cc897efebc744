import {
  EntityGitError,
  PROJECT_STATUSES,
  isEntityGitError,
  validateNode,
  validateSession,
  type DagNode,
  type ErrorCode,
  type JsonValue,
  type Project,
  type ProjectStatus,
  type Session,
} from '@entity-git/core';
import { sql, type AliasedRawBuilder, type RawBuilder } from 'kysely';
import { DEFAULT_VALUE_FORMATS, decodeValue, type ValueFormats } from './value-formats.js';

// Queries are built from runtime names (a user's own tables), so they go through `sql.id`, which
// quotes one identifier and never parses dots or `as` out of it.

/** A column reference by its physical name, typed as the caller says the column is. */
export function col<T = unknown>(name: string): RawBuilder<T> {
  return sql.id(name) as RawBuilder<T>;
}

/** A select list giving each contract column under its contract name; missing columns read as NULL. */
export function selection(names: object, columns: readonly string[]): AliasedRawBuilder<unknown, string>[] {
  const map = names as Record<string, string | null>;
  return columns.map((c) => (map[c] === null ? sql`null`.as(c) : sql.id(map[c]!).as(c)));
}

export const NODE_COLUMNS = [
  'id',
  'session_id',
  'seq',
  'role',
  'content',
  'predecessor',
  'caller',
  'created_at',
  'metadata',
] as const;
export const SESSION_COLUMNS = [
  'id',
  'title',
  'agent_id',
  'model',
  'project_id',
  'head',
  'created_at',
  'metadata',
] as const;
export const PROJECT_COLUMNS = ['id', 'name', 'workdir', 'status', 'description', 'created_at'] as const;

/** JSON null is SQL NULL; anything else is its JSON text (which escapes lone surrogates and NUL). */
export function encodeJson(value: JsonValue): string | null {
  return value === null ? null : JSON.stringify(value);
}

/** An id column's value as the model's string id (users' tables may key rows by integers). */
export function text(raw: unknown): string {
  // Users' existing tables may key rows by integers; the model's ids are strings.
  return typeof raw === 'number' || typeof raw === 'bigint' ? String(raw) : (raw as string);
}

export function nullableText(raw: unknown): string | null {
  return raw === null || raw === undefined ? null : text(raw);
}

export function num(raw: unknown): number {
  // pg hands back bigint and numeric columns as strings.
  return typeof raw === 'string' || typeof raw === 'bigint' ? Number(raw) : (raw as number);
}

type Row = Record<string, unknown>;

/**
 * The error for a stored row the model refuses: `INVALID_ID` for an empty or over-long id, as the
 * writer and the model say it (one code for one cause, whichever side found it, and one the
 * service knows no retry can fix); anything else about the row stays `DB_ERROR` naming it.
 */
export function invalidRow(err: unknown, message: string, data: Record<string, unknown>): EntityGitError {
  const code = isEntityGitError(err) && MODEL_CODES.has(err.code) ? err.code : 'DB_ERROR';
  return new EntityGitError(code, `${message}: ${(err as Error)?.message ?? String(err)}`, data, { cause: err });
}

const MODEL_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['INVALID_ID']);

/** A nodes row as a model node; a row the model would refuse gets the model's code (see invalidRow), naming the row. */
export function decodeNode(row: Row, formats: ValueFormats = DEFAULT_VALUE_FORMATS): DagNode {
  const node = {
    id: text(row.id),
    session_id: text(row.session_id),
    seq: num(row.seq),
    role: row.role as DagNode['role'],
    content: decodeValue(row.content, formats.nodes.content, `content of node ${JSON.stringify(row.id)}`),
    predecessor: nullableText(row.predecessor),
    caller: nullableText(row.caller),
    created_at: num(row.created_at),
    metadata: decodeValue(row.metadata, formats.nodes.metadata, `metadata of node ${JSON.stringify(row.id)}`),
  };
  try {
    validateNode(node);
  } catch (err) {
    throw invalidRow(err, `[sqlite] the row of node ${JSON.stringify(node.id)} is not a valid node`, {
      nodeId: node.id,
    });
  }
  return node;
}

/** A sessions row as a model session. */
export function decodeSession(row: Row, formats: ValueFormats = DEFAULT_VALUE_FORMATS): Session {
  const session = {
    id: text(row.id),
    title: nullableText(row.title),
    agent_id: nullableText(row.agent_id),
    model: nullableText(row.model),
    project_id: nullableText(row.project_id),
    head: nullableText(row.head),
    created_at: num(row.created_at),
    metadata: decodeValue(row.metadata, formats.sessions.metadata, `metadata of session ${JSON.stringify(row.id)}`),
  };
  try {
    validateSession(session);
  } catch (err) {
    throw invalidRow(err, `[sqlite] the row of session ${JSON.stringify(session.id)} is not a valid session`, {
      sessionId: session.id,
    });
  }
  return session;
}

/** A projects row plus its sessions' ids as a model project. */
export function decodeProject(row: Row, sessions: string[]): Project {
  const status = row.status as ProjectStatus;
  if (!PROJECT_STATUSES.includes(status)) {
    throw new EntityGitError(
      'DB_ERROR',
      `[sqlite] project ${JSON.stringify(row.id)} has an unknown status ${JSON.stringify(row.status)}`,
    );
  }
  return {
    id: text(row.id),
    name: row.name as string,
    workdir: row.workdir as string,
    status,
    description: nullableText(row.description),
    created_at: num(row.created_at),
    sessions,
  };
}
