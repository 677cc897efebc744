import { EntityGitError, validateSession, type DagNode, type DagSource, type Session } from '@entity-git/core';
import { PREFIX } from './errors.js';
import { DEFAULT_BATCH_SIZE, type IdbDag } from './idb-dag.js';

export interface ImportRowsOptions {
  /** The browser DAG to write into. */
  into: IdbDag;
  /** The session row, exactly as the other DAG has it (its head included). */
  session: Session;
  /** The session's nodes, whole (seq included), in any order of batches; validated on the way in. */
  nodes: Iterable<DagNode> | AsyncIterable<DagNode>;
  /** Nodes per IndexedDB transaction. Default {@link DEFAULT_BATCH_SIZE}. */
  batchSize?: number;
  /** Called after each batch with the nodes taken so far. */
  onProgress?: (p: { sessionId: string; nodes: number }) => void;
}

export interface ImportSessionOptions extends Omit<ImportRowsOptions, 'session' | 'nodes'> {
  /** Where the session comes from: any DagSource (SQL behind an API, a MemoryDag of received rows…). */
  from: DagSource;
  sessionId: string;
}

export interface ImportResult {
  sessionId: string;
  /** True when the session was new to the browser DAG. */
  created: boolean;
  /** Nodes added, replaced (a filled placeholder) and found equal. */
  added: number;
  updated: number;
  unchanged: number;
  /** The highest seq imported (0 for a session without nodes). */
  lastSeq: number;
}

/**
 * Copy a session's rows into the browser DAG exactly — ids, seqs, times, content and the session
 * row — so that a browser mirror of it commits the very ids the source's mirror does. Importing
 * again brings the copy up to date (new nodes added, filled placeholders replaced, the session
 * row and head taken over); nodes only the browser has are kept, and a seq or id that means
 * another node here is refused (`DAG_DUPLICATE_SEQ`, `DAG_DUPLICATE_ID`): delete the session
 * first to start over. The head is set last, once every node it may name is in.
 */
export async function importRows(options: ImportRowsOptions): Promise<ImportResult> {
  const { into, session } = options;
  validateSession(session);
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1)
    throw new EntityGitError('INVALID_OPTION', `${PREFIX} batchSize must be a positive integer`, { batchSize });
  const sessionId = session.id;
  const existing = await into.getSession(sessionId);
  if (existing === null) await into.createSession({ ...session, head: null });
  const result: ImportResult = {
    sessionId,
    created: existing === null,
    added: 0,
    updated: 0,
    unchanged: 0,
    lastSeq: 0,
  };
  let batch: DagNode[] = [];
  let taken = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const counts = await into.mergeNodes(batch);
    result.added += counts.added;
    result.updated += counts.updated;
    result.unchanged += counts.unchanged;
    taken += batch.length;
    batch = [];
    options.onProgress?.({ sessionId, nodes: taken });
  };
  for await (const node of options.nodes) {
    if (typeof node !== 'object' || node === null || node.session_id !== sessionId) {
      throw new EntityGitError(
        'INVALID_NODE',
        `${PREFIX} a node of session ${JSON.stringify((node as DagNode | null)?.session_id)} among the rows of ${JSON.stringify(sessionId)}`,
        { nodeId: (node as DagNode | null)?.id ?? null },
      );
    }
    result.lastSeq = Math.max(result.lastSeq, node.seq);
    batch.push(node);
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  const { id: _id, ...row } = session;
  await into.updateSession(sessionId, row);
  return result;
}

/** {@link importRows} reading from another {@link DagSource}. */
export async function importSession(options: ImportSessionOptions): Promise<ImportResult> {
  const { from, sessionId, ...rest } = options;
  const session = await from.getSession(sessionId);
  if (session === null)
    throw new EntityGitError(
      'SESSION_NOT_FOUND',
      `${PREFIX} the source DAG has no session ${JSON.stringify(sessionId)}`,
      { sessionId },
    );
  const batchSize = rest.batchSize ?? DEFAULT_BATCH_SIZE;
  return importRows({ ...rest, session, nodes: from.nodesAfter(sessionId, 0, { batchSize }) });
}
