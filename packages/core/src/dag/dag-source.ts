import type { DagNode, Session } from '../model/types.js';

/**
 * Reads a session DAG — the source of truth the mirror follows. Implementations: `MemoryDag`
 * (core), the SQL source of `@entity-git/sqlite`, the IndexedDB source of `@entity-git/browser-fs`.
 *
 * Every method is read-only; the mirror never writes the DAG (a git failure must not touch it).
 */
export interface DagSource {
  /**
   * The ids of every session, in a stable order (creation order where known). `[]` for an empty
   * DAG.
   */
  listSessions(): Promise<string[]>;

  /**
   * One session's row, or `null` when the session does not exist (never an error). The row is a
   * copy: changing it changes nothing stored.
   */
  getSession(sessionId: string): Promise<Session | null>;

  /**
   * The nodes of a session whose `seq` is greater than `afterSeq`, ordered by `seq` ascending.
   * Implementations stream or page so that a 20,000-node session is never held in memory at once
   * by the source itself; the mirror consumes the iterator incrementally. An unknown session
   * yields nothing; nodes appended while a caller iterates are yielded once each, in order.
   *
   * @param afterSeq - exclusive lower bound; `0` (the default) reads the whole session.
   * @param options.batchSize - a hint for paged implementations (default: implementation's own).
   */
  nodesAfter(sessionId: string, afterSeq?: number, options?: { batchSize?: number }): AsyncIterable<DagNode>;

  /**
   * Optional: the session's head, the node the conversation continues from, `null` for "the leaf
   * with the highest seq" and for an unknown session. Equal to `getSession(id)?.head ?? null`,
   * which is what a caller reads when a source leaves it out (the default); a source may add it
   * to answer cheaply. The mirror does not call it.
   */
  getHead?(sessionId: string): Promise<string | null>;

  /**
   * Optional: the session's change marker, an opaque value that changes with every write to the
   * session — a node appended, filled, edited, rewritten or deleted, the head moved, the session
   * row edited — and never takes a value it had before for other contents. A revision the
   * writers keep qualifies, and so does a checksum of the session's rows (equal contents, equal
   * marker: such a marker may come back to a value it had when the contents do). The mirror
   * records it with each sync; a start-up check (`reconcile`, `entity-git verify`) skips a session
   * whose marker and branch tips equal the recorded ones instead of reading its whole DAG. The
   * mirror reads it before the rows and again after them, and records it only when both reads
   * agree: a write racing a sync leaves no marker recorded, or one older than the rows it read, so
   * the next check reads the session again, never the reverse.
   *
   * Resolves `null` when the source keeps no marker for the session (a session older than the
   * marker, a read that failed): the mirror then does the full check. Absent (the default):
   * always the full check. A marker that stays the same across a write is the one wrong answer:
   * a source that cannot promise it must return `null`.
   */
  changeMarker?(sessionId: string): Promise<string | null>;

  /**
   * Optional: the change markers of many sessions in one read (a grouped query, where one
   * `changeMarker` call a session would be thousands of queries), for the start-up check of every
   * session. Each value is exactly what `changeMarker` resolves for that session at that moment.
   *
   * @param sessionIds - the sessions wanted; absent (the default): every session of the source.
   * Resolves a map from session id to marker (`null`: none kept, the full check). A session the map
   * leaves out is asked with `changeMarker` by the caller; a failed read resolves an empty map
   * (never rejects). Absent (the default): callers ask `changeMarker` session by session.
   */
  changeMarkers?(sessionIds?: readonly string[]): Promise<Map<string, string | null>>;

  /**
   * Optional: the source may still change a node of the newest turn after giving it as complete.
   * A source that keeps no pending flag of its own infers completeness from the rows its
   * application goes on writing (an application's store read through a mapping), and the
   * application may write a reply's row again after the rows already read as complete (an
   * OpenCode reply whose error is written before its completion time). The mirror then reads the
   * newest turn again at each sync (and the one before, when the newest node is a new prompt), so
   * such a change commits the turn again. Default false: the nodes a commit holds are not read
   * again.
   */
  readonly lastTurnMayChange?: boolean;
}

/**
 * What a dispatcher writes; the mirror never calls these. Errors are `EntityGitError`s; a refused
 * write stores nothing.
 */
export interface DagWriter {
  /**
   * Create a session and return the stored row. `created_at` defaults to now; `title`,
   * `agent_id`, `model`, `project_id`, `head` and `metadata` to `null`. An id already used is
   * `INVALID_SESSION`; an invalid field `INVALID_ID`, `INVALID_SESSION` or `NON_JSON_VALUE`.
   */
  createSession(session: Partial<Session> & { id: string }): Promise<Session>;
  /**
   * Append a node; `seq` is assigned atomically per session (the next after the highest, `1` for
   * the first). `predecessor`, `caller` and `metadata` default to `null`, `created_at` to now.
   * Returns the stored node. An unknown session is `SESSION_NOT_FOUND`, an id already used
   * `DAG_DUPLICATE_ID`, an invalid node `INVALID_NODE`, `INVALID_ID` or `NON_JSON_VALUE`; a refused
   * append consumes no seq.
   */
  appendNode(
    node: Omit<DagNode, 'seq' | 'created_at' | 'metadata' | 'caller' | 'predecessor'> &
      Partial<Pick<DagNode, 'created_at' | 'metadata' | 'caller' | 'predecessor'>>,
  ): Promise<DagNode>;
  /**
   * Replace a placeholder's content and metadata (the seq and every other field stay); returns
   * the stored node. `metadata` absent (the default) keeps the old metadata, `null` clears it. A
   * node not in that session is `NODE_NOT_FOUND`.
   */
  fillNode(
    sessionId: string,
    nodeId: string,
    content: DagNode['content'],
    metadata?: DagNode['metadata'],
  ): Promise<DagNode>;
  /**
   * Move the session's head (`null`: follow the highest-seq leaf). An unknown session is
   * `SESSION_NOT_FOUND`, a malformed node id `INVALID_ID`, a node not in the session
   * `NODE_NOT_FOUND`.
   */
  setHead(sessionId: string, nodeId: string | null): Promise<void>;
}
