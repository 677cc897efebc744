import type { DagNode, Session } from '../model/types.js';

/**
 * Reads a session DAG — the source of truth the mirror follows. Implementations: `MemoryDag`
 * (core), the SQL source of `@entity-git/sqlite`, the IndexedDB source of `@entity-git/browser-fs`.
 *
 * Every method is read-only; the mirror never writes the DAG (a git failure must not touch it).
 */
export interface DagSource {
  /**
   * The ids of every session, in a stable order (creation order where known).
   */
  listSessions(): Promise<string[]>;

  /**
   * One session's row, or `null` when the session does not exist.
   */
  getSession(sessionId: string): Promise<Session | null>;

  /**
   * The nodes of a session whose `seq` is greater than `afterSeq`, ordered by `seq` ascending.
   * Implementations stream or page so that a 20,000-node session is never held in memory at once
   * by the source itself; the mirror consumes the iterator incrementally.
   *
   * @param afterSeq - exclusive lower bound; `0` (the default) reads the whole session.
   * @param options.batchSize - a hint for paged implementations (default: implementation's own).
   */
  nodesAfter(sessionId: string, afterSeq?: number, options?: { batchSize?: number }): AsyncIterable<DagNode>;

  /**
   * The session's head: the node the conversation continues from, `null` for "the leaf with the
   * highest seq". Equal to `getSession(id).head`; separate so a source can answer it cheaply.
   */
  getHead(sessionId: string): Promise<string | null>;
}

/** What a dispatcher writes; the mirror never calls these. */
export interface DagWriter {
  /** Create a session; `created_at` defaults to now, the other fields to null. */
  createSession(session: Partial<Session> & { id: string }): Promise<Session>;
  /**
   * Append a node; `seq` is assigned atomically per session (the next after the highest).
   * Returns the stored node.
   */
  appendNode(node: Omit<DagNode, 'seq' | 'created_at' | 'metadata' | 'caller' | 'predecessor'> &
    Partial<Pick<DagNode, 'created_at' | 'metadata' | 'caller' | 'predecessor'>>): Promise<DagNode>;
  /** Replace a placeholder's content and metadata (the seq stays). */
  fillNode(sessionId: string, nodeId: string, content: DagNode['content'], metadata?: DagNode['metadata']): Promise<DagNode>;
  /** Move the session's head (null: follow the highest-seq leaf). */
  setHead(sessionId: string, nodeId: string | null): Promise<void>;
}
