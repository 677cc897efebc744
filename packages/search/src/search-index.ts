import { readdir } from 'node:fs/promises';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  readRepositoryChanges,
  sessionDirName,
  type MirrorService,
  type KnownRepository,
  type RepositoryChanges,
  type SearchQuery,
  type SearchResult,
  type SearchSource,
} from '@entity-git/core';
import { EntityGitError, storeFor, type Store } from '@entity-git/git';
import { nodeStorage } from '@entity-git/node-fs';
import Database from 'better-sqlite3';
import { INDEX_FILE, TextPacker, ensureSchema, preparedOnce, type Prepared } from './index-schema.js';
import { CarriedWrites, inWriteTransaction, type Carried } from './carried-writes.js';
import { IndexWriter } from './index-writer.js';
import { indexContents, type IndexContents } from './index-contents.js';
import { runSearch } from './run-search.js';
import { indexError, type IndexUpdate, type SearchIndexOptions, type SyncDone } from './search-types.js';
import { UpdateQueue, type FlushCount, type OnIndexError, type QueuedUpdate } from './update-queue.js';
import { WriteThread } from './write-thread.js';

/** Past this many queued updates a batch is applied at once. */
const BATCH_MAX = 256;
/** The `code` of the process warning given when the write thread fails and the index records on the caller's thread. */
export const THREAD_WARNING = 'ENTITY_GIT_SEARCH_THREAD';

/**
 * entity-git's own full-text index of every session repository under a root (docs/design.md,
 * 'Search'): SQLite FTS5 in one file beside the repositories, filled from the repositories' objects
 * (never the application's database), each message's text kept in it (compressed) so a query reads
 * no repository. `afterSync` takes what a sync wrote from its result: the branches it moved, from
 * the tips the index last saw up. Each update is one transaction, so a process killed during one
 * leaves the index as it was, and the next update does the work again; `reindex` builds it from
 * the repositories alone, through the same code.
 */
export class SearchIndex implements SearchSource {
  readonly root: string;
  readonly file: string;
  readonly #db: Database.Database;
  readonly #store: Store;
  // One update of a session at a time in this process; other processes are kept right by the
  // tips check inside each transaction.
  readonly #running = new Map<string, Promise<IndexUpdate>>();
  readonly #sql: Prepared;
  readonly #packer: TextPacker;
  readonly #writer: IndexWriter;
  readonly #carried: CarriedWrites;
  // Null: results are recorded on this connection, in the caller's thread.
  #thread: WriteThread | null;
  readonly #queue: UpdateQueue;

  constructor(options: SearchIndexOptions) {
    this.root = options.root.replace(/\/+$/, '') || '/';
    if (!this.root.startsWith('/'))
      throw new EntityGitError('INVALID_OPTION', `the search index's root must be absolute, got ${this.root}`);
    this.file = options.file ?? join(this.root, INDEX_FILE);
    this.#store = storeFor(options.storage ?? nodeStorage());
    this.#thread = options.writeThread === false ? null : new WriteThread(this.root, this.file);
    const batchMs = options.batchMs ?? 50;
    if (!Number.isFinite(batchMs) || batchMs < 0)
      throw new EntityGitError('INVALID_OPTION', `batchMs must be a number of ms ≥ 0, got ${batchMs}`);
    this.#queue = new UpdateQueue(
      {
        applyCarried: async (batch) => this.#leftOf(batch, await this.#record(batch.map((u) => u.result))),
        read: (u) => this.#readQueued(u),
      },
      batchMs,
      BATCH_MAX,
    );
    try {
      // The root may not exist before the first sync makes it; the index is as much at home there.
      mkdirSync(dirname(this.file), { recursive: true });
      this.#db = new Database(this.file);
      this.#db.pragma('busy_timeout = 10000');
      ensureSchema(this.#db);
      this.#packer = new TextPacker(this.#db);
      this.#sql = preparedOnce(this.#db);
      this.#writer = new IndexWriter(this.#packer, this.#sql);
      this.#carried = new CarriedWrites({ root: this.root, db: this.#db, sql: this.#sql, packer: this.#packer });
    } catch (err) {
      throw indexError(err, `cannot open the search index ${this.file}`);
    }
  }

  /** Brings the index up to date with one session's repository (nothing when it has none yet). */
  update(sessionId: string): Promise<IndexUpdate> {
    return this.#serial(sessionId, () => this.#updateDir(join(this.root, sessionDirName(sessionId))));
  }

  /**
   * Brings the index up to date with what one sync wrote, from its result, in a transaction of
   * its own. When every branch it moved was carried forward from the tip the index holds, the
   * messages the result carries are all it takes (no repository is read; recorded on the write
   * thread unless `writeThread: false`); else only the branches it moved are read (their refs,
   * their new commits, trees and message files), and none when it moved none. A session the index
   * does not know yet is read whole, as `update` does.
   */
  afterSync(result: SyncDone): Promise<IndexUpdate> {
    const { sessionId, branchesMoved, head } = result;
    const dir = join(this.root, sessionDirName(sessionId));
    return this.#serial(sessionId, async () => {
      const [done] = await this.#record([result]);
      if (done instanceof EntityGitError) throw done;
      return done ?? this.#updateDir(dir, { branches: branchesMoved, head });
    });
  }

  /**
   * Queues the update of a sync's result (what `attach` does): applied with the others queued
   * within `batchMs` in one transaction, off the sync's path. `flush()` or `settle()` resolves
   * once everything queued before it is in the index; a failure goes to `onError`.
   */
  enqueue(result: SyncDone, onError?: OnIndexError): void {
    this.#queue.push({ result, onError });
  }

  /**
   * Applies every queued update now; resolves when they are in the index (a failure goes to its
   * `onError`), with how many were applied from what their results carried and how many read.
   */
  flush(): Promise<FlushCount> {
    return this.#queue.flush();
  }

  /**
   * Records a repository's changes that the caller read or wrote itself (the shape
   * `readRepositoryChanges` gives), in one transaction, as `update` would. `dir` is the
   * repository's directory under the root; the changes must start from the tips the index holds.
   */
  apply(dir: string, changes: RepositoryChanges): IndexUpdate {
    const known = this.#tipsOf(dir);
    const done = this.#transaction(() => this.#applyIn(dir, known, changes));
    if (done === null) throw new EntityGitError('SEARCH_INDEX_ERROR', `the tips of ${dir} moved during the update`);
    return done;
  }

  /** Empties the index and fills it again from every repository under the root. */
  async reindex(): Promise<IndexUpdate> {
    this.#db.exec(
      `DELETE FROM places; DELETE FROM turns; DELETE FROM docs; DELETE FROM branches; DELETE FROM sessions;
       INSERT INTO words(words) VALUES ('delete-all');`,
    );
    const total: IndexUpdate = { sessions: 0, added: 0, removed: 0 };
    const dirs = (await readdir(this.root, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
    for (const name of dirs.sort()) {
      const done = await this.#updateDir(join(this.root, name));
      total.sessions += done.sessions;
      total.added += done.added;
    }
    this.compact();
    return total;
  }

  /**
   * Rewrites the file at its smallest (what `reindex` ends with): the full-text index's segments
   * merged into one, then `VACUUM` (every page filled, none left free) and the write-ahead log
   * emptied. It takes the whole file's time (seconds at a million messages) and holds the write
   * lock meanwhile: for after a rebuild, not after each update.
   */
  compact(): void {
    try {
      this.#db.exec(`INSERT INTO words(words) VALUES ('optimize')`);
      this.#db.exec('VACUUM');
      this.#db.pragma('wal_checkpoint(TRUNCATE)');
    } catch (err) {
      throw indexError(err, `cannot compact the search index ${this.file}`);
    }
  }

  async search(query: SearchQuery): Promise<SearchResult> {
    return runSearch(this.#sql, this.#packer, query);
  }

  /**
   * Updates the index after every sync of `service` that wrote something (its `committed`
   * event). A failed update fails nothing else: it goes to `onError`, and the next update of
   * the session (or `reindex`) does its work. Returns the function that stops listening.
   */
  attach(service: Pick<MirrorService, 'on'>, onError?: OnIndexError): () => void {
    return service.on('committed', ({ result }) => this.enqueue(result, onError));
  }

  /**
   * The index's contents by what they mean, not by row ids: every session with its HEAD, branch
   * and tip; every message (blob) with its role, seq, places and words. Two indexes of the same
   * repositories answer alike exactly when their contents are equal (a rebuilt one and a live one).
   */
  contents(): IndexContents {
    return indexContents(this.#db, this.#sql, this.#packer);
  }

  /** Resolves when every queued update is applied and no update started by this instance is under way (before `close`). */
  async settle(): Promise<void> {
    await this.#queue.flush();
    await Promise.allSettled([...this.#running.values()]);
  }

  /**
   * Closes the file. The write thread records what it was sent (this waits for it, blocked) and
   * closes its connection, then the queued updates that carry their messages are applied here;
   * one that needs its repository read is left to the session's next update (or `reindex`):
   * `settle()` first applies them all.
   */
  close(): void {
    this.#thread?.close();
    this.#thread = null;
    if (this.#db.open) {
      const last = this.#queue.take();
      this.#leftOf(last, this.#carried.record(last.map((u) => u.result)));
    }
    this.#db.close();
  }

  /**
   * Syncs' results recorded from the messages they carry, in one transaction (one each if that
   * fails): on the write thread, or on this connection when there is none or the thread refused
   * them. A thread that cannot run (a bundle without its module, a thread that ended) leaves the
   * recording to this connection from then on, with a process warning: a batch it may have
   * recorded before it ended is checked against the tips again, like any result.
   */
  #record(results: readonly SyncDone[]): Promise<Carried[]> {
    const thread = this.#thread;
    if (thread === null) return Promise.resolve(this.#carried.record(results));
    return thread.record(results).catch((err: unknown) => {
      // Closed meanwhile: the thread recorded what it was sent before it closed; the rest is the next update's.
      if (!this.#db.open) return results.map(() => null);
      if (thread.failed && this.#thread === thread) {
        this.#thread = null;
        process.emitWarning(
          `entity-git: the search index ${this.file} records on the calling thread from now on: ${(err as Error).message.replace(/^\[entity-git\] /, '')}`,
          { code: THREAD_WARNING },
        );
      }
      return this.#carried.record(results);
    });
  }

  /** The queued updates whose results were recorded: a failure to its `onError`; returns those left to read. */
  #leftOf(batch: readonly QueuedUpdate[], outcomes: readonly Carried[]): QueuedUpdate[] {
    const left: QueuedUpdate[] = [];
    outcomes.forEach((o, k) => {
      const u = batch[k]!;
      if (o === null) left.push(u);
      else if (o instanceof EntityGitError) u.onError?.(u.result.sessionId, o);
    });
    return left;
  }

  async #readQueued(u: QueuedUpdate): Promise<void> {
    // Closed meanwhile: left to the session's next update (the index's tips say where it stopped).
    if (!this.#db.open) return;
    const { sessionId, branchesMoved, head } = u.result;
    const dir = join(this.root, sessionDirName(sessionId));
    await this.#serial(sessionId, () => this.#updateDir(dir, { branches: branchesMoved, head })).catch((err: unknown) =>
      u.onError?.(sessionId, indexError(err, 'search index update')),
    );
  }

  #serial(sessionId: string, work: () => Promise<IndexUpdate>): Promise<IndexUpdate> {
    const before = this.#running.get(sessionId) ?? Promise.resolve(null);
    const next = before.catch(() => null).then(work);
    this.#running.set(sessionId, next);
    const clear = () => {
      if (this.#running.get(sessionId) === next) this.#running.delete(sessionId);
    };
    next.then(clear, clear);
    return next;
  }

  async #updateDir(dir: string, moved?: KnownRepository['moved']): Promise<IndexUpdate> {
    if (!this.#db.open) throw new EntityGitError('SEARCH_INDEX_ERROR', `the search index ${this.file} is closed`);
    for (let again = false; ; again = true) {
      const known = this.#tipsOf(dir);
      const session = (
        this.#sql(`SELECT session FROM sessions WHERE dir = ?`).get(dir) as { session: string } | undefined
      )?.session;
      // What the sync moved is enough once the index knows the session (a sync deletes no branch);
      // read again after another process moved the tips, every ref is listed.
      const given = session !== undefined && !again && moved !== undefined ? { session, moved } : { session };
      let changes: RepositoryChanges | null;
      try {
        changes = await readRepositoryChanges(this.#store, dir, known, given);
      } catch (err) {
        throw indexError(err, `cannot read the repository ${dir} for the search index`);
      }
      if (changes === null) return { sessions: 0, added: 0, removed: 0 };
      const applied = this.#transaction(() => this.#applyIn(dir, known, changes));
      if (applied !== null) return applied;
    }
  }

  #tipsOf(dir: string): Map<string, string> {
    const rows = this.#sql(
      `SELECT b.name, b.tip FROM branches b JOIN sessions s ON s.id = b.session WHERE s.dir = ?`,
    ).all(dir) as { name: string; tip: string }[];
    return new Map(rows.map((r) => [r.name, r.tip]));
  }

  #transaction(work: () => IndexUpdate | null): IndexUpdate | null {
    return inWriteTransaction(this.#db, this.#packer, work);
  }

  /** Inside a transaction: the changes recorded, unless the tips moved since `known` (null: read again). */
  #applyIn(dir: string, known: Map<string, string>, c: RepositoryChanges): IndexUpdate | null {
    const now = this.#tipsOf(dir);
    if (now.size !== known.size || [...now].some(([b, t]) => known.get(b) !== t)) return null;
    return this.#writer.record(dir, c);
  }
}
