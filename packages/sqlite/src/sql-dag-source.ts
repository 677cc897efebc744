import { EntityGitError, type DagNode, type DagSource, type Session } from '@entity-git/core';
import type { Kysely } from 'kysely';
import { dbError, isStorableText } from './engine.js';
import { NODE_COLUMNS, SESSION_COLUMNS, col, decodeNode, decodeSession, selection } from './rows.js';
import { resolveSchemaNames, type SchemaNames, type SchemaNamesInput } from './schema-names.js';
import { resolveValueFormats, type ValueFormats, type ValueFormatsInput } from './value-formats.js';

/** Rows per page of {@link SqlDagSource.nodesAfter} when the caller gives no `batchSize`. */
export const DEFAULT_BATCH_SIZE = 500;
/** Pages larger than this are refused: the point of paging is a bounded footprint. */
export const MAX_BATCH_SIZE = 100_000;

export interface SqlDagSourceOptions {
  /** Any Kysely instance; the source only reads, with plain `SELECT`s, so any dialect works. */
  db: Kysely<any>;
  /** Table and column names, when the database is not laid out as DESIGN.md §2 says. */
  names?: SchemaNamesInput;
  /** How `content` and `metadata` are stored (default: JSON text). */
  formats?: ValueFormatsInput;
  /** Default page size of `nodesAfter` (default {@link DEFAULT_BATCH_SIZE}). */
  batchSize?: number;
}

/**
 * {@link DagSource} over SQL through kysely. `nodesAfter` pages by keyset (`seq > last seen`,
 * `ORDER BY seq`, `LIMIT batchSize`), served by the UNIQUE(session_id, seq) index: each page is
 * one index range scan, memory is one page, and rows appended while a reader pages are picked up
 * rather than skipped or repeated (an OFFSET pager would do both).
 */
export class SqlDagSource implements DagSource {
  readonly options: Readonly<{ db: Kysely<any>; names: SchemaNames; formats: ValueFormats; batchSize: number }>;

  constructor(options: SqlDagSourceOptions) {
    const batchSize = checkBatchSize(options.batchSize ?? DEFAULT_BATCH_SIZE);
    this.options = Object.freeze({ db: options.db, names: resolveSchemaNames(options.names), formats: resolveValueFormats(options.formats), batchSize });
  }

  async listSessions(): Promise<string[]> {
    const { db, names } = this.options;
    const S = names.sessions;
    try {
      const rows = await db.selectFrom(S.table).select(selection(S, ['id'])).orderBy(col(S.created_at)).orderBy(col(S.id)).execute();
      return rows.map((r) => String(r.id));
    } catch (err) {
      throw dbError(err, 'listing sessions');
    }
  }

  async getSession(sessionId: string): Promise<Session | null> {
    if (typeof sessionId !== 'string' || !isStorableText(sessionId)) return null;
    const { db, names } = this.options;
    const S = names.sessions;
    let row: Record<string, unknown> | undefined;
    try {
      row = await db.selectFrom(S.table).select(selection(S, SESSION_COLUMNS)).where(col(S.id), '=', sessionId).executeTakeFirst();
    } catch (err) {
      throw dbError(err, `reading session ${JSON.stringify(sessionId)}`);
    }
    return row ? decodeSession(row, this.options.formats) : null;
  }

  async *nodesAfter(sessionId: string, afterSeq = 0, options: { batchSize?: number } = {}): AsyncIterable<DagNode> {
    const batchSize = checkBatchSize(options.batchSize ?? this.options.batchSize);
    if (typeof afterSeq !== 'number' || Number.isNaN(afterSeq)) {
      throw new EntityGitError('INVALID_OPTION', '[sqlite] afterSeq must be a number', { afterSeq });
    }
    if (typeof sessionId !== 'string' || !isStorableText(sessionId)) return;
    const { db, names } = this.options;
    const N = names.nodes;
    let cursor = afterSeq;
    for (;;) {
      let rows: Record<string, unknown>[];
      try {
        rows = await db.selectFrom(N.table).select(selection(N, NODE_COLUMNS))
          .where(col(N.session_id), '=', sessionId)
          .where(col(N.seq), '>', cursor)
          .orderBy(col(N.seq))
          .limit(batchSize)
          .execute();
      } catch (err) {
        throw dbError(err, `reading nodes of session ${JSON.stringify(sessionId)} after seq ${cursor}`);
      }
      for (const row of rows) {
        const node = decodeNode(row, this.options.formats);
        cursor = node.seq;
        yield node;
      }
      if (rows.length < batchSize) return;
    }
  }

  async getHead(sessionId: string): Promise<string | null> {
    const { db, names } = this.options;
    const S = names.sessions;
    if (S.head === null || typeof sessionId !== 'string' || !isStorableText(sessionId)) return null;
    try {
      const row = await db.selectFrom(S.table).select(selection(S, ['head'])).where(col(S.id), '=', sessionId).executeTakeFirst();
      return row?.head === null || row?.head === undefined ? null : String(row.head);
    } catch (err) {
      throw dbError(err, `reading the head of session ${JSON.stringify(sessionId)}`);
    }
  }
}

function checkBatchSize(size: unknown): number {
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 1 || size > MAX_BATCH_SIZE) {
    throw new EntityGitError('INVALID_OPTION', `[sqlite] batchSize must be an integer from 1 to ${MAX_BATCH_SIZE}`, { batchSize: size });
  }
  return size;
}
