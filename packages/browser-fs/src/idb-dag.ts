import {
  assertId,
  draftNode,
  EntityGitError,
  isAbsolutePath,
  PROJECT_STATUSES,
  sessionRow,
  validateNode,
  validateSession,
  type AppendNodeInput as CoreAppendNodeInput,
  type DagNode,
  type DagSource,
  type DagWriter,
  type JsonValue,
  type Project,
  type ProjectStatus,
  type ProjectStore,
  type Session,
  type StorageFs,
} from '@entity-git/core';
import { deleteDB, openDB, type DBSchema, type IDBPDatabase, type IDBPTransaction, type StoreNames } from 'idb';
import { dbError, PREFIX } from './errors.js';

/** The IndexedDB database the DAG lives in unless told otherwise. */
export const DEFAULT_DAG_NAME = 'entity-git-dag';
/** Nodes per page of {@link IdbDag.nodesAfter} when the caller gives no `batchSize`. */
export const DEFAULT_BATCH_SIZE = 500;
/** Pages larger than this are refused: the point of paging is a bounded footprint. */
export const MAX_BATCH_SIZE = 100_000;

const SCHEMA_VERSION = 1;

/** A session row as stored: JSON values as JSON text (so values round-trip as MemoryDag's do). */
interface SessionRow {
  id: string;
  title: string | null;
  agent_id: string | null;
  model: string | null;
  project_id: string | null;
  head: string | null;
  created_at: number;
  metadata: string;
  /** Creation order: `listSessions` and a project's sessions are given in it. */
  ord: number;
  /**
   * The change marker (issue 22): set at creation to a random 48-bit start, bumped in the same
   * transaction as every write to the session or its nodes. Absent on rows written before markers
   * (no marker: the mirror's full check) until the session's next write.
   */
  rev?: number;
}

interface NodeRow {
  session_id: string;
  seq: number;
  id: string;
  role: DagNode['role'];
  content: string;
  predecessor: string | null;
  caller: string | null;
  created_at: number;
  metadata: string;
}

interface ProjectRow {
  id: string;
  name: string;
  workdir: string;
  status: ProjectStatus;
  description: string | null;
  created_at: number;
  ord: number;
}

/**
 * The schema (DESIGN.md §2 in IndexedDB terms). `nodes` is keyed by `[session_id, seq]` — the
 * (session_id, seq) index of the SQL schema, here the primary key, so a session's nodes are one
 * key range read in seq order; `by_id` on `[session_id, id]` makes an id unique per session
 * (as in MemoryDag) and finds a node by id. A row whose `project_id` is null is simply absent
 * from `by_project` (null is no IndexedDB key).
 */
interface DagSchema extends DBSchema {
  sessions: { key: string; value: SessionRow; indexes: { by_ord: number; by_project: string } };
  nodes: { key: [string, number]; value: NodeRow; indexes: { by_id: [string, string] } };
  projects: { key: string; value: ProjectRow; indexes: { by_ord: number; by_name: string } };
}

type Db = IDBPDatabase<DagSchema>;
type Names = StoreNames<DagSchema>;
type Tx<S extends Names[]> = IDBPTransaction<DagSchema, S, 'readwrite' | 'readonly'>;
type WTx<S extends Names[]> = IDBPTransaction<DagSchema, S, 'readwrite'>;

export interface IdbDagOptions {
  /** The IndexedDB database name. Default {@link DEFAULT_DAG_NAME}. */
  name?: string;
  /** Default page size of `nodesAfter`. Default {@link DEFAULT_BATCH_SIZE}. */
  batchSize?: number;
  /** The clock for default `created_at`s, in seconds since the epoch. Default `Date.now() / 1000`. */
  now?: () => number;
  /**
   * The file system project workdirs live in (a browser project's files are in LightningFS:
   * pass `browserStorage().fs`). When given, `createProject` checks that the workdir is an
   * existing directory there; without it only that the path is absolute (as MemoryDag does).
   */
  workdirs?: Pick<StorageFs, 'stat'>;
}

/** An append as {@link DagWriter.appendNode} takes it. */
export type AppendNodeInput = CoreAppendNodeInput;

const encode = (v: JsonValue): string => JSON.stringify(v);
const decode = (text: string): JsonValue => JSON.parse(text) as JsonValue;
/** After the largest number: arrays sort after every number in IndexedDB's key order. */
const AFTER_NUMBERS: [] = [];

/** A first revision no other database's session is likely to share (one of 2^48). */
const firstRev = (): number => Math.floor(Math.random() * 2 ** 48);
const nextRev = (row: SessionRow): number => (row.rev === undefined ? firstRev() : row.rev + 1);

/** Bump the marker of each session in `ids` (inside the write that changed them). */
async function bumpRevs(
  sessions: { get(id: string): Promise<SessionRow | undefined>; put(row: SessionRow): Promise<unknown> },
  ids: Iterable<string>,
): Promise<void> {
  for (const id of ids) {
    const row = await sessions.get(id);
    if (row) await sessions.put({ ...row, rev: nextRev(row) });
  }
}

function sessionOf(r: SessionRow): Session {
  return {
    id: r.id,
    title: r.title,
    agent_id: r.agent_id,
    model: r.model,
    project_id: r.project_id,
    head: r.head,
    created_at: r.created_at,
    metadata: decode(r.metadata),
  };
}

function nodeOf(r: NodeRow): DagNode {
  return {
    id: r.id,
    session_id: r.session_id,
    seq: r.seq,
    role: r.role,
    content: decode(r.content),
    predecessor: r.predecessor,
    caller: r.caller,
    created_at: r.created_at,
    metadata: decode(r.metadata),
  };
}

function rowOf(n: DagNode): NodeRow {
  return {
    session_id: n.session_id,
    seq: n.seq,
    id: n.id,
    role: n.role,
    content: encode(n.content),
    predecessor: n.predecessor,
    caller: n.caller,
    created_at: n.created_at,
    metadata: encode(n.metadata),
  };
}

function checkBatchSize(n: unknown): number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > MAX_BATCH_SIZE) {
    throw new EntityGitError('INVALID_OPTION', `${PREFIX} batchSize must be an integer from 1 to ${MAX_BATCH_SIZE}`, {
      batchSize: n,
    });
  }
  return n;
}

const sessionNotFound = (id: unknown) =>
  new EntityGitError('SESSION_NOT_FOUND', `${PREFIX} no session ${JSON.stringify(id)}`, { sessionId: id });
const nodeNotFound = (sessionId: unknown, nodeId: unknown) =>
  new EntityGitError(
    'NODE_NOT_FOUND',
    `${PREFIX} no node ${JSON.stringify(nodeId)} in session ${JSON.stringify(sessionId)}`,
    { sessionId, nodeId },
  );
const projectNotFound = (id: unknown) =>
  new EntityGitError('PROJECT_NOT_FOUND', `${PREFIX} no project ${JSON.stringify(id)}`, { projectId: id });
const duplicateId = (id: string) =>
  new EntityGitError('DAG_DUPLICATE_ID', `${PREFIX} node ${JSON.stringify(id)} exists already`, { nodeId: id });

function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(9));
  return `proj_${Array.from(bytes, (b) => (b % 36).toString(36)).join('')}`;
}

/**
 * The DAG and the projects in IndexedDB (through `idb`), so the whole pipeline — DAG, mirror,
 * replay — runs offline in a page: a {@link DagSource}, {@link DagWriter} and
 * {@link ProjectStore} with MemoryDag's semantics. Every write is one IndexedDB transaction
 * (IndexedDB runs overlapping read-write transactions one at a time, across tabs too), so an
 * append's seq — the next after the session's highest — is never given twice.
 *
 * Open it with {@link openIdbDag}; values are copied in and out.
 */
export class IdbDag implements DagSource, DagWriter, ProjectStore {
  readonly options: Readonly<{
    name: string;
    batchSize: number;
    now: () => number;
    workdirs: Pick<StorageFs, 'stat'> | null;
  }>;
  private connection: Promise<Db> | null = null;
  private closed = false;

  /** Prefer {@link openIdbDag}, which also opens the database (and so fails early). */
  constructor(options: IdbDagOptions = {}) {
    this.options = Object.freeze({
      name: options.name ?? DEFAULT_DAG_NAME,
      batchSize: checkBatchSize(options.batchSize ?? DEFAULT_BATCH_SIZE),
      now: options.now ?? (() => Date.now() / 1000),
      workdirs: options.workdirs ?? null,
    });
    if (typeof this.options.name !== 'string' || this.options.name === '')
      throw new EntityGitError('INVALID_OPTION', `${PREFIX} the database name must be a non-empty string`);
  }

  /** The open database; opened again after another tab's upgrade or a browser-side close. */
  private db(): Promise<Db> {
    if (this.closed)
      return Promise.reject(
        new EntityGitError('DB_ERROR', `${PREFIX} the DAG database ${JSON.stringify(this.options.name)} is closed`),
      );
    if (this.connection === null) {
      const forget = () => {
        this.connection = null;
      };
      const opening = openDB<DagSchema>(this.options.name, SCHEMA_VERSION, {
        upgrade(db) {
          const sessions = db.createObjectStore('sessions', { keyPath: 'id' });
          sessions.createIndex('by_ord', 'ord', { unique: true });
          sessions.createIndex('by_project', 'project_id');
          const nodes = db.createObjectStore('nodes', { keyPath: ['session_id', 'seq'] });
          nodes.createIndex('by_id', ['session_id', 'id'], { unique: true });
          const projects = db.createObjectStore('projects', { keyPath: 'id' });
          projects.createIndex('by_ord', 'ord', { unique: true });
          projects.createIndex('by_name', 'name', { unique: true });
        },
        // Another tab wants a newer schema or to delete the database: let it.
        blocking: () => {
          void opening.then((db) => db.close());
          forget();
        },
        terminated: forget,
      });
      this.connection = opening
        .then((db) => {
          const missing = (['sessions', 'nodes', 'projects'] as const).filter((s) => !db.objectStoreNames.contains(s));
          if (missing.length > 0) {
            db.close();
            throw new EntityGitError(
              'DB_ERROR',
              `${PREFIX} the IndexedDB database ${JSON.stringify(this.options.name)} exists but is not an entity-git DAG (no ${missing.join(', ')} store): give the DAG a database of its own`,
              { name: this.options.name, missing },
            );
          }
          return db;
        })
        .catch((err: unknown) => {
          forget();
          throw dbError(err, `opening the DAG database ${JSON.stringify(this.options.name)}`);
        });
    }
    return this.connection;
  }

  /** Open the database now (creating its schema), so a blocked or refused open fails here. */
  async open(): Promise<this> {
    await this.db();
    return this;
  }

  /** Close the connection; the instance cannot be used afterwards. */
  async close(): Promise<void> {
    const c = this.connection;
    this.closed = true;
    this.connection = null;
    if (c) (await c.catch(() => null))?.close();
  }

  /** One read-only transaction. */
  private async read<S extends Names[], T>(stores: S, what: string, fn: (tx: Tx<S>) => Promise<T>): Promise<T> {
    const db = await this.db();
    try {
      const tx = db.transaction(stores, 'readonly');
      return await fn(tx);
    } catch (err) {
      throw dbError(err, what);
    }
  }

  /**
   * One read-write transaction: `fn` may only await IndexedDB requests (anything else lets the
   * transaction commit early). A typed error thrown by `fn` aborts it, so nothing is stored.
   */
  private async write<S extends Names[], T>(stores: S, what: string, fn: (tx: WTx<S>) => Promise<T>): Promise<T> {
    const db = await this.db();
    let tx: WTx<S>;
    try {
      tx = db.transaction(stores, 'readwrite');
    } catch (err) {
      throw dbError(err, what);
    }
    let result: T;
    try {
      result = await fn(tx);
    } catch (err) {
      try {
        tx.abort();
      } catch {
        // already finished
      }
      await tx.done.catch(() => undefined);
      throw dbError(err, what);
    }
    try {
      await tx.done;
    } catch (err) {
      throw dbError(err, what);
    }
    return result;
  }

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

  // ---- DagWriter ----

  async createSession(input: Partial<Session> & { id: string }): Promise<Session> {
    const session = sessionRow(input, this.options.now);
    const metadata = encode(session.metadata);
    await this.write(['sessions'], `creating session ${JSON.stringify(session.id)}`, async (tx) => {
      const store = tx.objectStore('sessions');
      if ((await store.getKey(session.id)) !== undefined) {
        throw new EntityGitError('INVALID_SESSION', `${PREFIX} session ${JSON.stringify(session.id)} exists already`, {
          sessionId: session.id,
        });
      }
      const last = await store.index('by_ord').openCursor(null, 'prev');
      await store.add({ ...session, metadata, ord: (last?.value.ord ?? 0) + 1, rev: firstRev() });
    });
    return { ...session, metadata: decode(metadata) };
  }

  /** Replace a session row's fields (not its id), as MemoryDag's `updateSession`. */
  async updateSession(sessionId: string, patch: Partial<Omit<Session, 'id'>>): Promise<Session> {
    if (typeof patch !== 'object' || patch === null)
      throw new EntityGitError('INVALID_SESSION', `${PREFIX} a session patch must be an object`);
    return this.write(['sessions'], `updating session ${JSON.stringify(sessionId)}`, async (tx) => {
      const store = tx.objectStore('sessions');
      const row = typeof sessionId === 'string' ? await store.get(sessionId) : undefined;
      if (!row) throw sessionNotFound(sessionId);
      const next: Session = { ...sessionOf(row), ...patch, id: row.id };
      validateSession(next);
      const metadata = encode(next.metadata);
      await store.put({ ...next, metadata, ord: row.ord, rev: nextRev(row) });
      return { ...next, metadata: decode(metadata) };
    });
  }

  /** Remove a session and its nodes (for example before importing it again from elsewhere). */
  async deleteSession(sessionId: string): Promise<void> {
    if (typeof sessionId !== 'string') throw sessionNotFound(sessionId);
    await this.write(['sessions', 'nodes'], `deleting session ${JSON.stringify(sessionId)}`, async (tx) => {
      if ((await tx.objectStore('sessions').getKey(sessionId)) === undefined) throw sessionNotFound(sessionId);
      await tx.objectStore('nodes').delete(IDBKeyRange.bound([sessionId, -Infinity], [sessionId, AFTER_NUMBERS]));
      await tx.objectStore('sessions').delete(sessionId);
    });
  }

  async appendNode(input: AppendNodeInput): Promise<DagNode> {
    const [node] = await this.appendNodes([input]);
    return node!;
  }

  /**
   * Append several nodes in one transaction, in order, each with the next seq of its session.
   * All or nothing: one invalid node or duplicate id and none is stored.
   */
  async appendNodes(inputs: readonly AppendNodeInput[]): Promise<DagNode[]> {
    if (!Array.isArray(inputs))
      throw new EntityGitError('INVALID_NODE', `${PREFIX} appendNodes takes an array of nodes`);
    // Each with seq 1, a stand-in: the transaction assigns the real one.
    const drafts = inputs.map((input) => draftNode(input, { now: () => this.options.now(), prefix: PREFIX }));
    if (drafts.length === 0) return [];
    return this.write(['sessions', 'nodes'], 'appending nodes', async (tx) => {
      const nodes = tx.objectStore('nodes');
      const next = new Map<string, number>();
      const taken = new Set<string>();
      const out: DagNode[] = [];
      for (const d of drafts) {
        let seq = next.get(d.session_id);
        if (seq === undefined) {
          if ((await tx.objectStore('sessions').getKey(d.session_id)) === undefined)
            throw sessionNotFound(d.session_id);
          const last = await nodes.openCursor(
            IDBKeyRange.bound([d.session_id, -Infinity], [d.session_id, AFTER_NUMBERS]),
            'prev',
          );
          seq = (last?.value.seq ?? 0) + 1;
        }
        const key = `${d.session_id}\u0000${d.id}`;
        if (taken.has(key) || (await nodes.index('by_id').getKey([d.session_id, d.id])) !== undefined)
          throw duplicateId(d.id);
        taken.add(key);
        const node = { ...d, seq };
        const row = rowOf(node);
        await nodes.add(row);
        next.set(d.session_id, seq + 1);
        out.push(nodeOf(row));
      }
      await bumpRevs(tx.objectStore('sessions'), next.keys());
      return out;
    });
  }

  /** Insert a node exactly as given, seq included (fixtures, imports); as MemoryDag's `addNode`. */
  async addNode(node: DagNode): Promise<DagNode> {
    const [stored] = await this.addNodes([node]);
    return stored!;
  }

  /** {@link IdbDag.addNode} for many nodes, in one transaction: all or nothing. */
  async addNodes(input: readonly DagNode[]): Promise<DagNode[]> {
    if (!Array.isArray(input)) throw new EntityGitError('INVALID_NODE', `${PREFIX} addNodes takes an array of nodes`);
    const rows = input.map((n) => {
      validateNode(n);
      return rowOf(n);
    });
    if (rows.length === 0) return [];
    return this.write(['sessions', 'nodes'], 'adding nodes', async (tx) => {
      const nodes = tx.objectStore('nodes');
      const sessions = new Set<string>();
      const ids = new Set<string>();
      const seqs = new Set<string>();
      for (const row of rows) {
        if (!sessions.has(row.session_id)) {
          if ((await tx.objectStore('sessions').getKey(row.session_id)) === undefined)
            throw sessionNotFound(row.session_id);
          sessions.add(row.session_id);
        }
        const idKey = `${row.session_id}\u0000${row.id}`;
        if (ids.has(idKey) || (await nodes.index('by_id').getKey([row.session_id, row.id])) !== undefined)
          throw duplicateId(row.id);
        const seqKey = `${row.session_id}\u0000${row.seq}`;
        if (seqs.has(seqKey) || (await nodes.getKey([row.session_id, row.seq])) !== undefined) {
          throw new EntityGitError(
            'DAG_DUPLICATE_SEQ',
            `${PREFIX} seq ${row.seq} is used already in session ${JSON.stringify(row.session_id)}`,
            { seq: row.seq, sessionId: row.session_id },
          );
        }
        ids.add(idKey);
        seqs.add(seqKey);
        await nodes.add(row);
      }
      await bumpRevs(tx.objectStore('sessions'), sessions);
      return rows.map(nodeOf);
    });
  }

  /**
   * Make the stored rows equal to `input` (whole nodes, seq included — the rows of another DAG),
   * in one transaction: a node not here is added; a node here with the same seq and id is
   * replaced by the given row (a placeholder filled since); a seq held by another id is
   * `DAG_DUPLICATE_SEQ`, an id held at another seq `DAG_DUPLICATE_ID` (the DAGs diverged).
   * Nodes the input does not mention are kept. All or nothing. Used by `importSession`.
   */
  async mergeNodes(input: readonly DagNode[]): Promise<{ added: number; updated: number; unchanged: number }> {
    if (!Array.isArray(input)) throw new EntityGitError('INVALID_NODE', `${PREFIX} mergeNodes takes an array of nodes`);
    const rows = input.map((n) => {
      validateNode(n);
      return rowOf(n);
    });
    const counts = { added: 0, updated: 0, unchanged: 0 };
    if (rows.length === 0) return counts;
    await this.write(['sessions', 'nodes'], 'merging nodes', async (tx) => {
      const nodes = tx.objectStore('nodes');
      const sessions = new Set<string>();
      for (const row of rows) {
        if (!sessions.has(row.session_id)) {
          if ((await tx.objectStore('sessions').getKey(row.session_id)) === undefined)
            throw sessionNotFound(row.session_id);
          sessions.add(row.session_id);
        }
        const here = await nodes.get([row.session_id, row.seq]);
        if (here && here.id !== row.id) {
          throw new EntityGitError(
            'DAG_DUPLICATE_SEQ',
            `${PREFIX} seq ${row.seq} of session ${JSON.stringify(row.session_id)} is node ${JSON.stringify(here.id)} here, ${JSON.stringify(row.id)} in the rows given`,
            { seq: row.seq, sessionId: row.session_id, here: here.id, given: row.id },
          );
        }
        if (!here) {
          const other = await nodes.index('by_id').getKey([row.session_id, row.id]);
          if (other !== undefined) throw duplicateId(row.id);
          await nodes.add(row);
          counts.added++;
        } else if (JSON.stringify(here) !== JSON.stringify({ ...here, ...row })) {
          await nodes.put(row);
          counts.updated++;
        } else {
          counts.unchanged++;
        }
      }
      if (counts.added + counts.updated > 0) await bumpRevs(tx.objectStore('sessions'), sessions);
    });
    return counts;
  }

  async fillNode(
    sessionId: string,
    nodeId: string,
    content: DagNode['content'],
    metadata?: DagNode['metadata'],
  ): Promise<DagNode> {
    if (typeof sessionId !== 'string' || typeof nodeId !== 'string') throw nodeNotFound(sessionId, nodeId);
    return this.write(['sessions', 'nodes'], `filling node ${JSON.stringify(nodeId)}`, async (tx) => {
      const nodes = tx.objectStore('nodes');
      const row = await nodes.index('by_id').get([sessionId, nodeId]);
      if (!row) throw nodeNotFound(sessionId, nodeId);
      const stored = nodeOf(row);
      const next: DagNode = { ...stored, content, metadata: metadata === undefined ? stored.metadata : metadata };
      validateNode(next);
      const nextRow = rowOf(next);
      await nodes.put(nextRow);
      await bumpRevs(tx.objectStore('sessions'), [sessionId]);
      return nodeOf(nextRow);
    });
  }

  async setHead(sessionId: string, nodeId: string | null): Promise<void> {
    await this.write(['sessions', 'nodes'], `setting the head of session ${JSON.stringify(sessionId)}`, async (tx) => {
      const sessions = tx.objectStore('sessions');
      const row = typeof sessionId === 'string' ? await sessions.get(sessionId) : undefined;
      if (!row) throw sessionNotFound(sessionId);
      if (nodeId !== null) {
        // Same order of checks as MemoryDag: the session, then the id's shape, then the node.
        assertId(nodeId, 'head');
        if ((await tx.objectStore('nodes').index('by_id').getKey([sessionId, nodeId])) === undefined)
          throw nodeNotFound(sessionId, nodeId);
      }
      await sessions.put({ ...row, head: nodeId, rev: nextRev(row) });
    });
  }

  // ---- ProjectStore ----

  async createProject(input: {
    name: string;
    workdir: string;
    description?: string | null;
    id?: string;
  }): Promise<Project> {
    if (typeof input !== 'object' || input === null)
      throw new EntityGitError('INVALID_PROJECT', `${PREFIX} a project must be an object`);
    if (typeof input.name !== 'string' || input.name.trim() === '')
      throw new EntityGitError('INVALID_PROJECT', `${PREFIX} a project needs a name`);
    if (typeof input.workdir !== 'string' || !isAbsolutePath(input.workdir)) {
      throw new EntityGitError(
        'INVALID_WORKDIR',
        `${PREFIX} workdir must be an absolute path: ${JSON.stringify(input.workdir)}`,
        { workdir: input.workdir },
      );
    }
    const description = input.description ?? null;
    if (description !== null && typeof description !== 'string')
      throw new EntityGitError('INVALID_PROJECT', `${PREFIX} a description must be a string or null`);
    if (input.id !== undefined) assertId(input.id, 'project id');
    if (this.options.workdirs) await this.checkWorkdir(input.workdir);
    const row: ProjectRow = {
      id: input.id ?? randomId(),
      name: input.name,
      workdir: input.workdir,
      status: 'active',
      description,
      created_at: this.options.now(),
      ord: 0,
    };
    await this.write(['projects'], `creating project ${JSON.stringify(input.name)}`, async (tx) => {
      const store = tx.objectStore('projects');
      if ((await store.index('by_name').getKey(row.name)) !== undefined) {
        throw new EntityGitError(
          'DUPLICATE_PROJECT',
          `${PREFIX} a project named ${JSON.stringify(row.name)} exists already`,
          { name: row.name },
        );
      }
      if ((await store.getKey(row.id)) !== undefined)
        throw new EntityGitError(
          'DUPLICATE_PROJECT',
          `${PREFIX} a project with id ${JSON.stringify(row.id)} exists already`,
          { projectId: row.id },
        );
      const last = await store.index('by_ord').openCursor(null, 'prev');
      row.ord = (last?.value.ord ?? 0) + 1;
      await store.add(row);
    });
    return projectOf(row, []);
  }

  private async checkWorkdir(workdir: string): Promise<void> {
    let isDir = false;
    try {
      isDir = (await this.options.workdirs!.stat(workdir)).isDirectory();
    } catch {
      isDir = false;
    }
    if (!isDir)
      throw new EntityGitError(
        'INVALID_WORKDIR',
        `${PREFIX} workdir is not an existing directory: ${JSON.stringify(workdir)}`,
        { workdir },
      );
  }

  async listProjects(): Promise<Project[]> {
    return this.read(['projects', 'sessions'], 'listing projects', async (tx) => {
      const rows = await tx.objectStore('projects').index('by_ord').getAll();
      const out: Project[] = [];
      for (const row of rows) out.push(projectOf(row, await sessionIds(tx, row.id)));
      return out;
    });
  }

  async getProject(projectId: string): Promise<Project | null> {
    if (typeof projectId !== 'string') return null;
    return this.read(['projects', 'sessions'], `reading project ${JSON.stringify(projectId)}`, async (tx) => {
      const row = await tx.objectStore('projects').get(projectId);
      return row ? projectOf(row, await sessionIds(tx, row.id)) : null;
    });
  }

  async setProjectStatus(projectId: string, status: ProjectStatus): Promise<Project> {
    return this.write(
      ['projects', 'sessions'],
      `setting the status of project ${JSON.stringify(projectId)}`,
      async (tx) => {
        const store = tx.objectStore('projects');
        const row = typeof projectId === 'string' ? await store.get(projectId) : undefined;
        if (!row) throw projectNotFound(projectId);
        if (!PROJECT_STATUSES.includes(status))
          throw new EntityGitError(
            'INVALID_PROJECT',
            `${PREFIX} status must be one of ${PROJECT_STATUSES.join(', ')}`,
            { status },
          );
        const next = { ...row, status };
        await store.put(next);
        return projectOf(next, await sessionIds(tx, row.id));
      },
    );
  }

  async addSessionToProject(projectId: string, sessionId: string): Promise<void> {
    await this.write(
      ['projects', 'sessions'],
      `adding session ${JSON.stringify(sessionId)} to project ${JSON.stringify(projectId)}`,
      async (tx) => {
        if (typeof projectId !== 'string' || (await tx.objectStore('projects').getKey(projectId)) === undefined)
          throw projectNotFound(projectId);
        const sessions = tx.objectStore('sessions');
        const row = typeof sessionId === 'string' ? await sessions.get(sessionId) : undefined;
        if (!row) throw sessionNotFound(sessionId);
        if (row.project_id !== projectId) await sessions.put({ ...row, project_id: projectId, rev: nextRev(row) });
      },
    );
  }

  async sessionsOfProject(projectId: string): Promise<string[]> {
    return this.read(
      ['projects', 'sessions'],
      `listing the sessions of project ${JSON.stringify(projectId)}`,
      async (tx) => {
        if (typeof projectId !== 'string' || (await tx.objectStore('projects').getKey(projectId)) === undefined)
          throw projectNotFound(projectId);
        return sessionIds(tx, projectId);
      },
    );
  }

  async projectOfSession(sessionId: string): Promise<Project | null> {
    return this.read(
      ['projects', 'sessions'],
      `reading the project of session ${JSON.stringify(sessionId)}`,
      async (tx) => {
        const row = typeof sessionId === 'string' ? await tx.objectStore('sessions').get(sessionId) : undefined;
        if (!row) throw sessionNotFound(sessionId);
        if (row.project_id === null) return null;
        const project = await tx.objectStore('projects').get(row.project_id);
        return project ? projectOf(project, await sessionIds(tx, project.id)) : null;
      },
    );
  }
}

function projectOf(r: ProjectRow, sessions: string[]): Project {
  return {
    id: r.id,
    name: r.name,
    workdir: r.workdir,
    status: r.status,
    description: r.description,
    created_at: r.created_at,
    sessions,
  };
}

/** A project's session ids, oldest first. */
async function sessionIds(tx: Tx<['projects', 'sessions']>, projectId: string): Promise<string[]> {
  const rows = await tx.objectStore('sessions').index('by_project').getAll(projectId);
  return rows.sort((a, b) => a.ord - b.ord).map((r) => r.id);
}

/** Open (creating on first use) the IndexedDB DAG. */
export async function openIdbDag(options: IdbDagOptions = {}): Promise<IdbDag> {
  return new IdbDag(options).open();
}

/** Delete a DAG database entirely (every session, node and project in it). */
export async function deleteIdbDag(name: string = DEFAULT_DAG_NAME): Promise<void> {
  try {
    await deleteDB(name);
  } catch (err) {
    throw dbError(err, `deleting the DAG database ${JSON.stringify(name)}`);
  }
}
