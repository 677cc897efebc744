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

  /**
   * Optional: the session's change marker, an opaque revision the writers keep that changes with
   * every write to the session — a node appended, filled, edited or deleted, the head moved, the
   * session row edited — and never takes a value it had before for other contents. The mirror
   * records it with each sync; a start-up check (`reconcile`, `entity-git verify`) skips a session
   * whose marker and branch tips equal the recorded ones instead of reading its whole DAG
   * (issue 22). The mirror reads it before the rows, so a write racing a sync leaves a marker
   * older than the rows it read: the next check reads the session again, never the reverse.
   *
   * Resolves `null` when the source keeps no marker for the session (a database written by
   * another program, a session older than the marker): the mirror then does the full check.
   * Absent (the default): always the full check. A marker that stays the same across a write is
   * the one wrong answer: a source that cannot promise it must return `null`.
   */
  changeMarker?(sessionId: string): Promise<string | null>;
}

/** What a dispatcher writes; the mirror never calls these. */
export interface DagWriter {
  /** Create a session; `created_at` defaults to now, the other fields to null. */
  createSession(session: Partial<Session> & { id: string }): Promise<Session>;
  /**
   * Append a node; `seq` is assigned atomically per session (the next after the highest).
   * Returns the stored node.
   */
  appendNode(
    node: Omit<DagNode, 'seq' | 'created_at' | 'metadata' | 'caller' | 'predecessor'> &
      Partial<Pick<DagNode, 'created_at' | 'metadata' | 'caller' | 'predecessor'>>,
  ): Promise<DagNode>;
  /** Replace a placeholder's content and metadata (the seq stays). */
  fillNode(
    sessionId: string,
    nodeId: string,
    content: DagNode['content'],
    metadata?: DagNode['metadata'],
  ): Promise<DagNode>;
  /** Move the session's head (null: follow the highest-seq leaf). */
  setHead(sessionId: string, nodeId: string | null): Promise<void>;
}
