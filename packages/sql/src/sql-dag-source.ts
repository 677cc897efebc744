import { EntityGitError, assertId, type DagNode, type DagSource, type Session } from '@entity-git/core';
import type { Kysely } from 'kysely';
import { readChangeMarker } from './change-marks.js';
import { dbError, detectEngine, isStorableText, unstorableText, type SqlEngine } from './engine.js';
import { getMappedHead, getMappedSession, listMappedSessions, mappedNodesAfter } from './mapping/mapped-reader.js';
import type { ResolvedMapping } from './mapping/resolved-mapping.js';
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
  /**
   * An application's own tables, read through a resolved mapping (see `docs/app-databases.md`)
   * instead of `names` and `formats`; made by the store factories. Default: none.
   */
  mapping?: ResolvedMapping | null;
  /**
   * The engine, for what its text can hold (default: detected; another dialect's text is held to
   * UTF-8's rule alone): a session id with NUL is looked up in SQLite and refused for PostgreSQL.
   */
  engine?: SqlEngine;
}

/**
 * {@link DagSource} over SQL through kysely. `nodesAfter` pages by keyset (`seq > last seen`,
 * `ORDER BY seq`, `LIMIT batchSize`), served by the UNIQUE(session_id, seq) index: each page is
 * one index range scan, memory is one page, and rows appended while a reader pages are picked up
 * rather than skipped or repeated (an OFFSET pager would do both).
 */
export class SqlDagSource implements DagSource {
  readonly options: Readonly<{
    db: Kysely<any>;
    names: SchemaNames;
    formats: ValueFormats;
    batchSize: number;
    mapping: ResolvedMapping | null;
    engine: SqlEngine | undefined;
  }>;
  /** Set once the markers table was found missing: a database without markers is not asked again. */
  private marksAbsent = false;

  constructor(options: SqlDagSourceOptions) {
    const batchSize = checkBatchSize(options.batchSize ?? DEFAULT_BATCH_SIZE);
    this.options = Object.freeze({
      db: options.db,
      names: resolveSchemaNames(options.names),
      formats: resolveValueFormats(options.formats),
      batchSize,
      mapping: options.mapping ?? null,
      engine: options.engine ?? detectEngine(options.db),
    });
  }

  async listSessions(): Promise<string[]> {
    const { db, names, mapping } = this.options;
    if (mapping !== null) return listMappedSessions(db, mapping);
    const S = names.sessions;
    try {
      const rows = await db
        .selectFrom(S.table)
        .select(selection(S, ['id']))
        .orderBy(col(S.created_at))
        .orderBy(col(S.id))
        .execute();
      return rows.map((r) => String(r.id));
    } catch (err) {
      throw dbError(err, 'listing sessions');
    }
  }

  async getSession(sessionId: string): Promise<Session | null> {
    storableSessionId(sessionId, this.options.engine);
    const { db, names, mapping } = this.options;
    if (mapping !== null) return getMappedSession(db, mapping, sessionId);
    const S = names.sessions;
    let row: Record<string, unknown> | undefined;
    try {
      row = await db
        .selectFrom(S.table)
        .select(selection(S, SESSION_COLUMNS))
        .where(col(S.id), '=', sessionId)
        .executeTakeFirst();
    } catch (err) {
      throw dbError(err, `reading session ${JSON.stringify(sessionId)}`);
    }
    return row ? decodeSession(row, this.options.formats) : null;
  }

  async *nodesAfter(sessionId: string, afterSeq = 0, options: { batchSize?: number } = {}): AsyncIterable<DagNode> {
    const batchSize = checkBatchSize(options.batchSize ?? this.options.batchSize);
    if (typeof afterSeq !== 'number' || Number.isNaN(afterSeq)) {
      throw new EntityGitError('INVALID_OPTION', '[sql] afterSeq must be a number', { afterSeq });
    }
    storableSessionId(sessionId, this.options.engine);
    const { db, names, mapping } = this.options;
    if (mapping !== null) {
      yield* mappedNodesAfter(db, mapping, sessionId, afterSeq, batchSize);
      return;
    }
    const N = names.nodes;
    let cursor = afterSeq;
    for (;;) {
      let rows: Record<string, unknown>[];
      try {
        rows = await db
          .selectFrom(N.table)
          .select(selection(N, NODE_COLUMNS))
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

  /**
   * The session's `rev` in the markers table migration 0002 creates (see `change-marks.ts`), kept
   * by triggers, so writes by any program count. Null — the mirror's full check — for a session
   * without a row and for a database without the table (one written by another program).
   */
  async changeMarker(sessionId: string): Promise<string | null> {
    // An application's tables carry no markers: they are never given any.
    if (
      this.marksAbsent ||
      this.options.mapping !== null ||
      typeof sessionId !== 'string' ||
      !isStorableText(sessionId, this.options.engine)
    )
      return null;
    const marker = await readChangeMarker(this.options.db, this.options.names, sessionId);
    if (marker !== 'absent') return marker;
    this.marksAbsent = true;
    return null;
  }

  async getHead(sessionId: string): Promise<string | null> {
    const { db, names, mapping } = this.options;
    if (mapping !== null)
      return typeof sessionId === 'string' && isStorableText(sessionId, this.options.engine)
        ? getMappedHead(db, mapping, sessionId)
        : null;
    const S = names.sessions;
    if (S.head === null || typeof sessionId !== 'string' || !isStorableText(sessionId, this.options.engine))
      return null;
    try {
      const row = await db
        .selectFrom(S.table)
        .select(selection(S, ['head']))
        .where(col(S.id), '=', sessionId)
        .executeTakeFirst();
      return row?.head === null || row?.head === undefined ? null : String(row.head);
    } catch (err) {
      throw dbError(err, `reading the head of session ${JSON.stringify(sessionId)}`);
    }
  }
}

function checkBatchSize(size: unknown): number {
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 1 || size > MAX_BATCH_SIZE) {
    throw new EntityGitError('INVALID_OPTION', `[sql] batchSize must be an integer from 1 to ${MAX_BATCH_SIZE}`, {
      batchSize: size,
    });
  }
  return size;
}

/**
 * A session id this store can hold, else `INVALID_ID` before any query: empty or over 1,024 bytes
 * (the model's rule), or with what the engine's text cannot hold (NUL in PostgreSQL, a lone
 * surrogate in either) — a row listed with such an id (written by another program) is refused by
 * name, never "not found".
 */
function storableSessionId(sessionId: unknown, engine: SqlEngine | undefined): asserts sessionId is string {
  assertId(sessionId, '[sql] session id');
  const why = unstorableText(sessionId, engine);
  if (why !== null)
    throw new EntityGitError('INVALID_ID', `[sql] session id ${JSON.stringify(sessionId)} holds ${why}`, {
      sessionId,
      engine,
    });
}
