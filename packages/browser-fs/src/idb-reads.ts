import { EntityGitError, type DagNode, type Session } from '@entity-git/core';
import { PREFIX } from './errors.js';
import { IdbConnection } from './idb-connection.js';
import { checkBatchSize, nodeOf, sessionOf } from './idb-rows.js';
import { AFTER_NUMBERS } from './idb-schema.js';

/** The {@link DagSource} side of {@link IdbDag}: read-only transactions. */
export class IdbDagReader extends IdbConnection {
  // ---- DagSource ----

  async listSessions(): Promise<string[]> {
    return this.read(
      ['sessions'],
      'listing sessions',
      async (tx) => (await tx.objectStore('sessions').index('by_ord').getAllKeys()) as string[],
    );
  }

  async getSession(sessionId: string): Promise<Session | null> {
    if (typeof sessionId !== 'string') return null;
    const row = await this.read(['sessions'], `reading session ${JSON.stringify(sessionId)}`, (tx) =>
      tx.objectStore('sessions').get(sessionId),
    );
    return row ? sessionOf(row) : null;
  }

  async getHead(sessionId: string): Promise<string | null> {
    return (await this.getSession(sessionId))?.head ?? null;
  }

  /** The session row's `rev` (see {@link SessionRow.rev}); null for a row written before markers. */
  async changeMarker(sessionId: string): Promise<string | null> {
    if (typeof sessionId !== 'string') return null;
    const row = await this.read(['sessions'], `reading the marker of session ${JSON.stringify(sessionId)}`, (tx) =>
      tx.objectStore('sessions').get(sessionId),
    );
    return row?.rev === undefined ? null : String(row.rev);
  }

  /**
   * Pages by key range on `[session_id, seq]`: each page is one read of the next `batchSize`
   * keys after the last seq seen, so memory is one page, and nodes appended while a reader pages
   * are picked up once each, in order.
   */
  async *nodesAfter(sessionId: string, afterSeq = 0, options: { batchSize?: number } = {}): AsyncIterable<DagNode> {
    const batchSize = checkBatchSize(options.batchSize ?? this.options.batchSize);
    if (typeof afterSeq !== 'number' || Number.isNaN(afterSeq))
      throw new EntityGitError('INVALID_OPTION', `${PREFIX} afterSeq must be a number`, { afterSeq });
    if (typeof sessionId !== 'string') return;
    let cursor = afterSeq;
    for (;;) {
      const range = IDBKeyRange.bound([sessionId, cursor], [sessionId, AFTER_NUMBERS], true, true);
      const rows = await this.read(
        ['nodes'],
        `reading nodes of session ${JSON.stringify(sessionId)} after seq ${cursor}`,
        (tx) => tx.objectStore('nodes').getAll(range, batchSize),
      );
      for (const row of rows) yield nodeOf(row);
      if (rows.length < batchSize) return;
      cursor = rows[rows.length - 1]!.seq;
    }
  }
}
