/** A JSON value as stored in a node's `content` and `metadata`. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type Role = 'user' | 'assistant' | 'tool' | 'system';
export const ROLES: readonly Role[] = ['user', 'assistant', 'tool', 'system'];

/** One message of a session's DAG (docs/design.md, 'The data model'). */
export interface DagNode {
  id: string;
  session_id: string;
  /** Per session, 1, 2, 3… in insertion order. */
  seq: number;
  role: Role;
  content: JsonValue;
  /** The conversation edge: the node this one continues from; null for a root. */
  predecessor: string | null;
  /** For a tool result: the assistant node that called the tool. */
  caller: string | null;
  /** Seconds since the epoch (fractions allowed). */
  created_at: number;
  metadata: JsonValue;
}

/** A chat session (docs/design.md, 'The data model'). */
export interface Session {
  id: string;
  title: string | null;
  agent_id: string | null;
  model: string | null;
  project_id: string | null;
  /** The node the conversation continues from; null: the leaf with the highest seq. */
  head: string | null;
  created_at: number;
  metadata: JsonValue;
}

export type ProjectStatus = 'active' | 'paused' | 'done';
export const PROJECT_STATUSES: readonly ProjectStatus[] = ['active', 'paused', 'done'];

/** A long-running unit of work bound to a directory (docs/design.md, 'The data model'). */
export interface Project {
  id: string;
  name: string;
  /** Absolute path of an existing directory. */
  workdir: string;
  status: ProjectStatus;
  description: string | null;
  created_at: number;
  /** Ids of the sessions that joined the project. */
  sessions: string[];
}
