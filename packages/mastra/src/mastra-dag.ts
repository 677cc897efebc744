import { assertId, EntityGitError, type DagNode, type DagSource, type Session } from '@entity-git/core';
import { sql, type Kysely } from 'kysely';
import { mastraTables, type MastraTables } from './mastra-tables.js';
import { messageNodes, type MessageNodes, type ThreadWalk } from './message-nodes.js';
import type { JsonObject } from './stored-content.js';
import { CREATED_TEXT, storedMessage, threadSession } from './stored-rows.js';

/** Messages read per query when `batchSize` is not given. */
export const DEFAULT_BATCH_SIZE = 500;
/** The largest `batchSize` accepted. */
export const MAX_BATCH_SIZE = 100_000;

export interface MastraDagOptions {
  /** A Kysely over the database Mastra's storage writes (any SQLite or PostgreSQL dialect). Only read. */
  db: Kysely<any>;
  /** PostgreSQL: the schema of Mastra's tables (`PostgresStore`'s `schemaName`). Default: the search path's. */
  schema?: string;
  /** Messages read per query (default {@link DEFAULT_BATCH_SIZE}, 1 … {@link MAX_BATCH_SIZE}). */
  batchSize?: number;
  /**
   * Leave a thread's last turn uncommitted while it waits for the model: its last message a
   * prompt without a reply, a tool call without its result, or results the model has not answered
   * yet (default `true`). `false` commits every turn as it stands: for threads that are over.
   */
  waitForReplies?: boolean;
}

type Row = Record<string, unknown>;

/**
 * Mastra's threads and messages (`mastra_threads`, `mastra_messages`) as core's read-only
 * `DagSource`: a thread is a session, a message a node, each tool result a `tool` node riding on
 * the assistant message that called it (see the package README for the mapping). Plain `SELECT`s
 * only; nothing is ever written to the database.
 *
 * It keeps no change marker (`changeMarker` is absent): Mastra rewrites a message's content in
 * place and keeps no revision of it, so only a full read can tell that a thread did not change.
 */
export class MastraDag implements DagSource {
  readonly options: Readonly<MastraDagOptions>;
  readonly tables: MastraTables;
  private readonly db: Kysely<any>;
  private readonly batchSize: number;
  private checked: Promise<void> | null = null;

  constructor(options: MastraDagOptions) {
    this.options = Object.freeze({ ...options });
    if (typeof options?.db?.selectFrom !== 'function')
      throw new EntityGitError('INVALID_OPTION', '[mastra] db must be a Kysely instance');
    this.db = options.db;
    this.tables = mastraTables(options.schema);
    this.batchSize = batchSizeOf(options.batchSize ?? DEFAULT_BATCH_SIZE);
    if (options.waitForReplies !== undefined && typeof options.waitForReplies !== 'boolean')
      throw new EntityGitError('INVALID_OPTION', '[mastra] waitForReplies must be a boolean', {
        waitForReplies: options.waitForReplies,
      });
  }

  async listSessions(): Promise<string[]> {
    await this.ready();
    const rows = await this.read(this.tables.threads, () =>
      this.db.selectFrom(this.tables.threads).select('id').orderBy('createdAt').orderBy('id').execute(),
    );
    return rows.map((r) => String(r.id));
  }

  async getSession(sessionId: string): Promise<Session | null> {
    const row = await this.threadRow(sessionId);
    return row === null ? null : threadSession(row, this.tables.threads);
  }

  async getHead(sessionId: string): Promise<string | null> {
    checkLookup(sessionId);
    return null;
  }

  /**
   * The thread's nodes after `afterSeq`. Seqs number the thread's messages in their order
   * (`createdAt`, then id), each message's tool results right after it, so every call reads the
   * thread from its first message, a page of `batchSize` messages per query (by keyset, no
   * transaction across pages), and yields only the nodes after `afterSeq`.
   */
  async *nodesAfter(sessionId: string, afterSeq = 0, options?: { batchSize?: number }): AsyncIterable<DagNode> {
    const batch = batchSizeOf(options?.batchSize ?? this.batchSize);
    const thread = await this.threadRow(sessionId);
    if (thread === null) return;
    const walk: ThreadWalk = {
      resourceId: typeof thread.resourceId === 'string' ? thread.resourceId : null,
      last: null,
      lastAssistant: null,
      callers: new Map(),
    };
    let seq = 0;
    // One message is held back until the next is seen: only the thread's last one can be open.
    let held: MessageNodes | null = null;
    let cursor: { created: string; id: string } | null = null;
    for (;;) {
      const rows = await this.messagePage(sessionId, cursor, batch);
      for (const row of rows) {
        const next = messageNodes(storedMessage(row, this.tables.messages, sessionId), walk);
        for (const n of next.nodes) n.seq = ++seq;
        if (held !== null) yield* after(held.nodes, afterSeq);
        held = next;
      }
      if (rows.length < batch) break;
      const last = rows.at(-1)!;
      cursor = { created: String(last[CREATED_TEXT]), id: String(last.id) };
    }
    if (held === null) return;
    if (held.open && this.options.waitForReplies !== false) {
      const first = held.nodes[0]!;
      first.metadata = { ...((first.metadata as JsonObject | null) ?? {}), pending: true };
    }
    yield* after(held.nodes, afterSeq);
  }

  private async threadRow(sessionId: string): Promise<Row | null> {
    checkLookup(sessionId);
    await this.ready();
    const { threads } = this.tables;
    const rows = await this.read(threads, () =>
      this.db
        .selectFrom(threads)
        .selectAll()
        .select(sql<string>`cast(${sql.ref('createdAt')} as text)`.as(CREATED_TEXT))
        .where('id', '=', sessionId)
        .execute(),
    );
    return (rows[0] as Row | undefined) ?? null;
  }

  private messagePage(threadId: string, cursor: { created: string; id: string } | null, batch: number): Promise<Row[]> {
    const { messages } = this.tables;
    return this.read(messages, () =>
      this.db
        .selectFrom(messages)
        .selectAll()
        .select(sql<string>`cast(${sql.ref('createdAt')} as text)`.as(CREATED_TEXT))
        .where('thread_id', '=', threadId)
        .$if(cursor !== null, (q) =>
          q.where((eb) =>
            eb.or([
              eb('createdAt', '>', cursor!.created),
              eb.and([eb('createdAt', '=', cursor!.created), eb('id', '>', cursor!.id)]),
            ]),
          ),
        )
        .orderBy('createdAt')
        .orderBy('id')
        .limit(batch)
        .execute(),
    );
  }

  /**
   * Once per source (again after a failure): the columns every query relies on exist, so a
   * database that is not Mastra's (or not yet: Mastra creates its tables on first use) is a
   * clear `SCHEMA_MISMATCH` rather than a failure deep in a sync.
   */
  private ready(): Promise<void> {
    this.checked ??= (async () => {
      const { threads, messages } = this.tables;
      const none = sql<boolean>`1 = 0`;
      await this.read(threads, () =>
        this.db
          .selectFrom(threads)
          .select(['id', 'resourceId', 'title', 'metadata', 'createdAt'])
          .where(none)
          .execute(),
      );
      await this.read(messages, () =>
        this.db.selectFrom(messages).select(['id', 'thread_id', 'content', 'role', 'createdAt']).where(none).execute(),
      );
    })().catch((err) => {
      this.checked = null;
      throw err;
    });
    return this.checked;
  }

  private async read<T>(table: string, query: () => Promise<T>): Promise<T> {
    try {
      return await query();
    } catch (err) {
      throw readError(err, table);
    }
  }
}

function* after(nodes: DagNode[], afterSeq: number): Iterable<DagNode> {
  for (const n of nodes) if (n.seq > afterSeq) yield n;
}

function batchSizeOf(n: unknown): number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > MAX_BATCH_SIZE)
    throw new EntityGitError('INVALID_OPTION', `[mastra] batchSize must be an integer from 1 to ${MAX_BATCH_SIZE}`, {
      batchSize: n,
    });
  return n;
}

/**
 * A thread id looked up: `INVALID_ID` for one no database row can hold as text (empty, over
 * 1,024 bytes, NUL, a lone surrogate), before any query, as the mirror refuses it.
 */
function checkLookup(id: string): void {
  assertId(id, 'thread id');
  if (/\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(id))
    throw new EntityGitError('INVALID_ID', '[mastra] a thread id cannot hold NUL or a lone surrogate', { id });
}

/** PostgreSQL's codes for a missing table, column or schema; SQLite says so in its message. */
const MISSING = new Set(['42P01', '42703', '3F000']);

function readError(err: unknown, table: string): EntityGitError {
  if (err instanceof EntityGitError) return err;
  const message = String((err as Error)?.message ?? err);
  const code = (err as { code?: unknown })?.code;
  const missing = (typeof code === 'string' && MISSING.has(code)) || /no such (table|column)/i.test(message);
  return new EntityGitError(
    missing ? 'SCHEMA_MISMATCH' : 'DB_ERROR',
    missing
      ? `[mastra] ${table} is not a table of Mastra's storage as expected (${message}); nothing was read`
      : `[mastra] reading ${table}: ${message}`,
    { table, driverCode: typeof code === 'string' ? code : undefined },
    { cause: err },
  );
}
