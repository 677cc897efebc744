import {
  EntityGitError,
  assertId,
  assertJson,
  draftNode,
  isEntityGitError,
  sessionRow,
  validateNode,
  type AppendNodeInput as CoreAppendNodeInput,
  type DagNode,
  type DagWriter,
  type JsonValue,
  type Session,
} from '@entity-git/core';
import type { Kysely } from 'kysely';
import { strictlyIncreasing } from './clock.js';
import {
  assertStorableText,
  dbError,
  isStorableText,
  resolveEngine,
  writeTransaction,
  type SqlEngine,
} from './engine.js';
import { NODE_COLUMNS, col, decodeNode, selection } from './rows.js';
import { resolveSchemaNames, type SchemaNames, type SchemaNamesInput } from './schema-names.js';
import { encodeValue, resolveValueFormats, type ValueFormats, type ValueFormatsInput } from './value-formats.js';

/** What {@link SqlDagWriter.appendNode} takes: a node without its seq, which the writer assigns. */
export type AppendNodeInput = CoreAppendNodeInput;

export interface SqlDagWriterOptions {
  /** A Kysely instance on SQLite or PostgreSQL. */
  db: Kysely<any>;
  /** Table and column names, when the database is not laid out with the contract's names (`DEFAULT_SCHEMA_NAMES`). */
  names?: SchemaNamesInput;
  /** How `content` and `metadata` are stored (default: JSON text). */
  formats?: ValueFormatsInput;
  /** The engine, when it cannot be told from the dialect (default: detected). */
  engine?: SqlEngine;
  /** The clock for default `created_at`s, in seconds since the epoch (default: `Date.now() / 1000`). */
  now?: () => number;
}

// Rows per INSERT in bulk appends: 9 parameters a row stays far below SQLite's 32,766 and
// PostgreSQL's 65,535 bound parameters.
const INSERT_CHUNK = 200;
const ID_LOOKUP_CHUNK = 500;

/**
 * {@link DagWriter} over SQL: the dispatcher's side. Every write is one transaction that takes the
 * lock it needs before reading anything — `BEGIN IMMEDIATE` on SQLite (see `writeTransaction`),
 * `SELECT … FOR UPDATE` on the session row on PostgreSQL — so appends to a session serialize
 * across connections and processes, and `max(seq) + 1` is never computed twice for one seq.
 */
export class SqlDagWriter implements DagWriter {
  readonly options: Readonly<{
    db: Kysely<any>;
    names: SchemaNames;
    formats: ValueFormats;
    engine: SqlEngine;
    now: () => number;
  }>;
  private readonly sessionClock: () => number;

  constructor(options: SqlDagWriterOptions) {
    this.options = Object.freeze({
      db: options.db,
      names: resolveSchemaNames(options.names),
      formats: resolveValueFormats(options.formats),
      engine: resolveEngine(options.db, options.engine),
      now: options.now ?? (() => Date.now() / 1000),
    });
    this.sessionClock = strictlyIncreasing(this.options.now);
  }

  async createSession(input: Partial<Session> & { id: string }): Promise<Session> {
    const session = sessionRow(input, this.sessionClock);
    assertStorableText(session.id, 'session id', 'INVALID_ID', this.options.engine);
    assertStorableText(session.project_id, 'session project_id', 'INVALID_ID', this.options.engine);
    assertStorableText(session.head, 'session head', 'INVALID_ID', this.options.engine);
    for (const key of ['title', 'agent_id', 'model'] as const)
      assertStorableText(session[key], `session ${key}`, 'INVALID_SESSION', this.options.engine);

    const { names } = this.options;
    const S = names.sessions;
    const values: Record<string, unknown> = { [S.id]: session.id, [S.created_at]: session.created_at };
    for (const key of ['title', 'agent_id', 'model', 'project_id', 'head', 'metadata'] as const) {
      const value =
        key === 'metadata'
          ? encodeValue(session.metadata, this.options.formats.sessions.metadata, 'session metadata')
          : session[key];
      const column = S[key];
      if (column !== null) values[column] = value;
      else if (value !== null) throw absentColumn('sessions', key);
    }
    await this.write(`creating session ${JSON.stringify(session.id)}`, async (trx) => {
      const existing = await trx
        .selectFrom(S.table)
        .select(col(S.id).as('id'))
        .where(col(S.id), '=', session.id)
        .executeTakeFirst();
      if (existing)
        throw new EntityGitError('INVALID_SESSION', `[sqlite] session ${JSON.stringify(session.id)} exists already`, {
          sessionId: session.id,
        });
      if (session.project_id !== null) {
        const P = names.projects;
        const project = await trx
          .selectFrom(P.table)
          .select(col(P.id).as('id'))
          .where(col(P.id), '=', session.project_id)
          .executeTakeFirst();
        if (!project)
          throw new EntityGitError('PROJECT_NOT_FOUND', `[sqlite] no project ${JSON.stringify(session.project_id)}`, {
            projectId: session.project_id,
          });
      }
      await trx.insertInto(S.table).values(values).execute();
    });
    return { ...session, metadata: roundTrip(session.metadata) };
  }

  async appendNode(input: AppendNodeInput): Promise<DagNode> {
    const [node] = await this.appendNodes([input]);
    return node!;
  }

  /**
   * Appends several nodes in one transaction, in order; each gets the next seq of its session.
   * All or nothing: one invalid node or duplicate id and none is stored. For imports and
   * backfills, where one transaction per node would cost a disk sync each.
   */
  async appendNodes(inputs: readonly AppendNodeInput[]): Promise<DagNode[]> {
    if (!Array.isArray(inputs))
      throw new EntityGitError('INVALID_NODE', '[sqlite] appendNodes takes an array of nodes');
    const drafts = inputs.map((input) => this.draft(input));
    if (drafts.length === 0) return [];
    const seen = new Set<string>();
    for (const d of drafts) {
      if (seen.has(d.id)) throw duplicateId(d.id);
      seen.add(d.id);
    }
    const ids = [...seen];
    const { names, engine } = this.options;
    const N = names.nodes;
    const S = names.sessions;
    try {
      return await this.write('appending nodes', async (trx) => {
        const next = new Map<string, number>();
        // Sorted, so two bulk appends touching the same sessions lock them in one order and
        // cannot deadlock on PostgreSQL.
        for (const sessionId of [...new Set(drafts.map((d) => d.session_id))].sort()) {
          let lock = trx.selectFrom(S.table).select(col(S.id).as('id')).where(col(S.id), '=', sessionId);
          if (engine === 'postgres') lock = lock.forUpdate();
          if (!(await lock.executeTakeFirst()))
            throw new EntityGitError('SESSION_NOT_FOUND', `[sqlite] no session ${JSON.stringify(sessionId)}`, {
              sessionId,
            });
          const top = await trx
            .selectFrom(N.table)
            .select((eb) => eb.fn.max(col<number>(N.seq)).as('top'))
            .where(col(N.session_id), '=', sessionId)
            .executeTakeFirst();
          next.set(sessionId, (top?.top === null || top?.top === undefined ? 0 : Number(top.top)) + 1);
        }
        const taken = await existingIds(trx, names, ids);
        if (taken.length > 0) throw duplicateId(taken[0]!);
        const nodes = drafts.map((d) => {
          const seq = next.get(d.session_id)!;
          next.set(d.session_id, seq + 1);
          return { ...d, seq };
        });
        for (let i = 0; i < nodes.length; i += INSERT_CHUNK) {
          await trx
            .insertInto(N.table)
            .values(nodes.slice(i, i + INSERT_CHUNK).map((n) => this.nodeValues(n)))
            .execute();
        }
        return nodes.map((n) => ({ ...n, content: roundTrip(n.content), metadata: roundTrip(n.metadata) }));
      });
    } catch (err) {
      if (!isEntityGitError(err, 'DB_ERROR')) throw err;
      // Two transactions inserting one id into different sessions are not serialized by the
      // session lock; the primary key catches the second, which we report as what it is.
      const taken = await existingIds(this.options.db, names, ids).catch(() => []);
      if (taken.length > 0) throw duplicateId(taken[0]!);
      throw err;
    }
  }

  async fillNode(
    sessionId: string,
    nodeId: string,
    content: DagNode['content'],
    metadata?: DagNode['metadata'],
  ): Promise<DagNode> {
    const { names } = this.options;
    const N = names.nodes;
    const notFound = () =>
      new EntityGitError(
        'NODE_NOT_FOUND',
        `[sqlite] no node ${JSON.stringify(nodeId)} in session ${JSON.stringify(sessionId)}`,
        { sessionId, nodeId },
      );
    if (
      typeof sessionId !== 'string' ||
      typeof nodeId !== 'string' ||
      !isStorableText(sessionId, this.options.engine) ||
      !isStorableText(nodeId, this.options.engine)
    )
      throw notFound();
    assertJson(content, 'content');
    if (metadata !== undefined) assertJson(metadata, 'metadata');
    if (metadata !== undefined && metadata !== null && N.metadata === null) throw absentColumn('nodes', 'metadata');
    return this.write(`filling node ${JSON.stringify(nodeId)}`, async (trx) => {
      const row = await trx
        .selectFrom(N.table)
        .select(selection(N, NODE_COLUMNS))
        .where(col(N.session_id), '=', sessionId)
        .where(col(N.id), '=', nodeId)
        .executeTakeFirst();
      if (!row) throw notFound();
      const stored = decodeNode(row, this.options.formats);
      const next: DagNode = {
        ...stored,
        content: roundTrip(content),
        metadata: metadata === undefined ? stored.metadata : roundTrip(metadata),
      };
      validateNode(next);
      const set: Record<string, unknown> = {
        [N.content]: encodeValue(next.content, this.options.formats.nodes.content, 'content'),
      };
      if (N.metadata !== null)
        set[N.metadata] = encodeValue(next.metadata, this.options.formats.nodes.metadata, 'node metadata');
      await trx
        .updateTable(N.table)
        .set(set)
        .where(col(N.session_id), '=', sessionId)
        .where(col(N.id), '=', nodeId)
        .execute();
      return next;
    });
  }

  async setHead(sessionId: string, nodeId: string | null): Promise<void> {
    const { names } = this.options;
    const S = names.sessions;
    const N = names.nodes;
    if (S.head === null) throw absentColumn('sessions', 'head');
    const head = S.head;
    if (typeof sessionId !== 'string' || !isStorableText(sessionId, this.options.engine))
      throw sessionNotFound(sessionId);
    await this.write(`setting the head of session ${JSON.stringify(sessionId)}`, async (trx) => {
      const session = await trx
        .selectFrom(S.table)
        .select(col(S.id).as('id'))
        .where(col(S.id), '=', sessionId)
        .executeTakeFirst();
      if (!session) throw sessionNotFound(sessionId);
      if (nodeId !== null) {
        const notFound = new EntityGitError(
          'NODE_NOT_FOUND',
          `[sqlite] no node ${JSON.stringify(nodeId)} in session ${JSON.stringify(sessionId)}`,
          { sessionId, nodeId },
        );
        // Same order of checks as MemoryDag: the session, then the id's shape, then the node.
        assertId(nodeId, 'head');
        if (!isStorableText(nodeId, this.options.engine)) throw notFound;
        const node = await trx
          .selectFrom(N.table)
          .select(col(N.id).as('id'))
          .where(col(N.session_id), '=', sessionId)
          .where(col(N.id), '=', nodeId)
          .executeTakeFirst();
        if (!node) throw notFound;
      }
      await trx
        .updateTable(S.table)
        .set({ [head]: nodeId })
        .where(col(S.id), '=', sessionId)
        .execute();
    });
  }

  /** The node as it will be stored, checked before any lock is taken; its seq is a stand-in. */
  private draft(input: AppendNodeInput): DagNode {
    const node = draftNode(input, { now: () => this.options.now(), prefix: '[sqlite]' });
    assertStorableText(node.id, 'node id', 'INVALID_ID', this.options.engine);
    assertStorableText(node.session_id, 'session id', 'INVALID_ID', this.options.engine);
    assertStorableText(node.predecessor, 'predecessor', 'INVALID_ID', this.options.engine);
    assertStorableText(node.caller, 'caller', 'INVALID_ID', this.options.engine);
    const N = this.options.names.nodes;
    if (N.caller === null && node.caller !== null) throw absentColumn('nodes', 'caller');
    if (N.metadata === null && node.metadata !== null) throw absentColumn('nodes', 'metadata');
    return node;
  }

  private nodeValues(n: DagNode): Record<string, unknown> {
    const N = this.options.names.nodes;
    const values: Record<string, unknown> = {
      [N.id]: n.id,
      [N.session_id]: n.session_id,
      [N.seq]: n.seq,
      [N.role]: n.role,
      [N.content]: encodeValue(n.content, this.options.formats.nodes.content, 'content'),
      [N.predecessor]: n.predecessor,
      [N.created_at]: n.created_at,
    };
    if (N.caller !== null) values[N.caller] = n.caller;
    if (N.metadata !== null)
      values[N.metadata] = encodeValue(n.metadata, this.options.formats.nodes.metadata, 'node metadata');
    return values;
  }

  private async write<T>(what: string, fn: (trx: Kysely<any>) => Promise<T>): Promise<T> {
    try {
      return await writeTransaction(this.options.db, this.options.engine, fn);
    } catch (err) {
      throw dbError(err, what);
    }
  }
}

async function existingIds(db: Kysely<any>, names: SchemaNames, ids: readonly string[]): Promise<string[]> {
  const N = names.nodes;
  const found: string[] = [];
  for (let i = 0; i < ids.length; i += ID_LOOKUP_CHUNK) {
    const rows = await db
      .selectFrom(N.table)
      .select(col(N.id).as('id'))
      .where(col(N.id), 'in', ids.slice(i, i + ID_LOOKUP_CHUNK))
      .execute();
    for (const r of rows) found.push(String(r.id));
  }
  return found;
}

function roundTrip(value: JsonValue): JsonValue {
  return value === null ? null : (JSON.parse(JSON.stringify(value)) as JsonValue);
}

function duplicateId(nodeId: string): EntityGitError {
  return new EntityGitError('DAG_DUPLICATE_ID', `[sqlite] node ${JSON.stringify(nodeId)} exists already`, { nodeId });
}

function sessionNotFound(sessionId: unknown): EntityGitError {
  return new EntityGitError('SESSION_NOT_FOUND', `[sqlite] no session ${JSON.stringify(sessionId)}`, { sessionId });
}

function absentColumn(table: string, column: string): EntityGitError {
  return new EntityGitError(
    'INVALID_OPTION',
    `[sqlite] names.${table}.${column} is null (the column does not exist), so a value for it cannot be stored`,
    { table, column },
  );
}
