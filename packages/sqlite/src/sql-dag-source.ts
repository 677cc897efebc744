import {
  DEFAULT_QUIET_MS,
  EntityGitError,
  assertId,
  type DagNode,
  type DagSource,
  type Session,
} from '@entity-git/core';
import type { Kysely } from 'kysely';
import { dbError, detectEngine, isStorableText, unstorableText, type SqlEngine } from './engine.js';
import { getMappedHead, getMappedSession, listMappedSessions, mappedNodesAfter } from './mapping/mapped-reader.js';
import { QueryReader } from './mapping/query-reader.js';
import type { ResolvedQueryMapping } from './mapping/query-mapping.js';
import type { ResolvedMapping } from './mapping/resolved-mapping.js';
import { SqlChangeMarkers } from './markers/sql-change-markers.js';
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
  /** Table and column names, when the database's are not the default ones. */
  names?: SchemaNamesInput;
  /** How `content` and `metadata` are stored (default: JSON text). */
  formats?: ValueFormatsInput;
  /** Default page size of `nodesAfter` (default {@link DEFAULT_BATCH_SIZE}). */
  batchSize?: number;
  /**
   * An application's own tables, read through a resolved mapping (see `docs/app-databases.md`)
   * instead of `names` and `formats`; made by the store factories. Default: none.
   */
  mapping?: ResolvedMapping | ResolvedQueryMapping | null;
  /**
   * The engine (default: detected from the dialect): for what its text can hold (a session id
   * with NUL is looked up in SQLite and refused for PostgreSQL; another dialect's text is held to
   * UTF-8's rule alone), and for the change markers of a database without entity-git's triggers,
   * which are computed in SQL (a dialect that is neither SQLite nor PostgreSQL has none).
   */
  engine?: SqlEngine;
  /**
   * The connection cannot write (a SQLite file opened read-only, as `openSqlite({ readonly })`
   * and every application's database are): a marker computed from the rows is then kept until
   * SQLite's `data_version` says another connection committed, so reading it again — as a sync
   * does after its rows — costs one pragma. Default false (a connection that may write itself
   * moves no `data_version`).
   */
  readOnlyConnection?: boolean;
  /**
   * With a mapping: milliseconds after which a session whose newest row is older is quiet, and
   * the turns the mapping's `open` rule holds back are committed (docs/design.md, 'Turns,
   * commits and branches': Completeness). Default {@link DEFAULT_QUIET_MS}, as for transcripts;
   * `Infinity`: only a row that follows completes a turn.
   */
  quietMs?: number;
  /** The clock of the quiet time, in seconds since the epoch (default: `Date.now() / 1000`). */
  now?: () => number;
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
    quietMs: number;
  }>;
  /** The reader of a mapping's query form, or null. */
  private readonly queries: QueryReader | null;
  private readonly markers: SqlChangeMarkers;
  private readonly now: () => number;
  /** Sessions read with open nodes left pending, by the time of their newest row (seconds). */
  private readonly open = new Map<string, number>();
  /**
   * An application's rows (a mapping, either form): their completeness is inferred, and the
   * application may still write a turn's rows after they read as complete.
   */
  readonly lastTurnMayChange: boolean;

  constructor(options: SqlDagSourceOptions) {
    const batchSize = checkBatchSize(options.batchSize ?? DEFAULT_BATCH_SIZE);
    this.options = Object.freeze({
      db: options.db,
      names: resolveSchemaNames(options.names),
      formats: resolveValueFormats(options.formats),
      batchSize,
      mapping: options.mapping == null || isQueryForm(options.mapping) ? null : options.mapping,
      engine: options.engine ?? detectEngine(options.db),
      quietMs: checkQuietMs(options.quietMs ?? DEFAULT_QUIET_MS),
    });
    this.now = options.now ?? (() => Date.now() / 1000);
    const { db, names, formats, mapping } = this.options;
    const engine = this.options.engine ?? null;
    const queryForm = options.mapping != null && isQueryForm(options.mapping) ? options.mapping : null;
    this.queries = queryForm === null || engine === null ? null : new QueryReader(db, engine, queryForm);
    this.lastTurnMayChange = options.mapping != null;
    const readOnlyConnection = options.readOnlyConnection === true;
    const quietBefore = () => this.quietBefore();
    const queries = this.queries;
    this.markers = new SqlChangeMarkers({
      db,
      engine,
      names,
      formats,
      mapping,
      queries,
      readOnlyConnection,
      quietBefore,
    });
  }

  /**
   * The sessions read with a turn held open whose newest row has since become older than the
   * quiet time, each told once: a follower (`entity-git watch`) syncs them again, and their open
   * turns are committed though no row changed. A session whose open turn was completed by a row
   * since may be told too: its sync then writes nothing.
   */
  quietSessions(): string[] {
    const cutoff = this.quietBefore();
    const due: string[] = [];
    for (const [id, newest] of this.open) {
      if (newest >= cutoff) continue;
      due.push(id);
      this.open.delete(id);
    }
    return due;
  }

  private quietBefore(): number {
    return this.now() - this.options.quietMs / 1000;
  }

  async listSessions(): Promise<string[]> {
    const { db, names, mapping } = this.options;
    if (this.queries !== null) return this.queries.listSessions();
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
    if (this.queries !== null) return this.queries.getSession(sessionId);
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
      throw new EntityGitError('INVALID_OPTION', '[sqlite] afterSeq must be a number', { afterSeq });
    }
    storableSessionId(sessionId, this.options.engine);
    const { db, names, mapping } = this.options;
    const read = {
      sessionId,
      afterSeq,
      batchSize,
      quietBefore: this.quietBefore(),
      onPending: (newest: number) => this.open.set(sessionId, newest),
    };
    if (this.queries !== null) {
      yield* this.queries.nodesAfter(read);
      return;
    }
    if (mapping !== null) {
      yield* mappedNodesAfter(db, mapping, read);
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
   * The session's change marker. A database entity-git created: the session's `rev` in the
   * markers table of migration 0002, kept by triggers, so writes by any program count. A database
   * without that table (an application's own, or entity-git's layout made by the application):
   * computed from the rows, nothing written (a checksum of the session's row and of every column
   * of its nodes that a read selects; SQLite through a function `openSqlite` registers on its
   * connection, PostgreSQL with built-in functions). Null — the mirror's full check — for a
   * session without a row, a dialect that is neither SQLite nor PostgreSQL, a SQLite connection
   * without the function, and a read that failed.
   */
  async changeMarker(sessionId: string): Promise<string | null> {
    if (typeof sessionId !== 'string' || !isStorableText(sessionId, this.options.engine)) return null;
    return this.markers.one(sessionId);
  }

  /**
   * The markers of `sessionIds` (default: every session) in one grouped read of each table, each
   * what {@link changeMarker} gives alone; an id no SQL text can hold maps to null. A failed read
   * resolves an empty map.
   */
  async changeMarkers(sessionIds?: readonly string[]): Promise<Map<string, string | null>> {
    if (sessionIds === undefined) return this.markers.many(null);
    const engine = this.options.engine;
    const storable = sessionIds.filter((id) => typeof id === 'string' && isStorableText(id, engine));
    const found = await this.markers.many(storable);
    if (found.size === 0 && storable.length > 0) return found;
    return new Map(sessionIds.map((id) => [id, found.get(id) ?? null]));
  }

  async getHead(sessionId: string): Promise<string | null> {
    const { db, names, mapping } = this.options;
    const storable = typeof sessionId === 'string' && isStorableText(sessionId, this.options.engine);
    if (this.queries !== null) return storable ? this.queries.getHead(sessionId) : null;
    if (mapping !== null) return storable ? getMappedHead(db, mapping, sessionId) : null;
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
    throw new EntityGitError('INVALID_OPTION', `[sqlite] batchSize must be an integer from 1 to ${MAX_BATCH_SIZE}`, {
      batchSize: size,
    });
  }
  return size;
}

function isQueryForm(m: ResolvedMapping | ResolvedQueryMapping): m is ResolvedQueryMapping {
  return 'form' in m && m.form === 'query';
}

function checkQuietMs(ms: unknown): number {
  if (typeof ms !== 'number' || Number.isNaN(ms) || ms < 0)
    throw new EntityGitError('INVALID_OPTION', '[sqlite] quietMs must be a number of ms, 0 or more (Infinity: never)', {
      quietMs: ms,
    });
  return ms;
}

/**
 * A session id this store can hold, else `INVALID_ID` before any query: empty or over 1,024 bytes
 * (the model's rule), or with what the engine's text cannot hold (NUL in PostgreSQL, a lone
 * surrogate in either) — a row listed with such an id (written by another program) is refused by
 * name, never "not found".
 */
function storableSessionId(sessionId: unknown, engine: SqlEngine | undefined): asserts sessionId is string {
  assertId(sessionId, '[sqlite] session id');
  const why = unstorableText(sessionId, engine);
  if (why !== null)
    throw new EntityGitError('INVALID_ID', `[sqlite] session id ${JSON.stringify(sessionId)} holds ${why}`, {
      sessionId,
      engine,
    });
}
