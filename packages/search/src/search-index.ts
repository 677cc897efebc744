import { readdir } from 'node:fs/promises';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  ROLES,
  readRepositoryChanges,
  sessionDirName,
  type MirrorService,
  type BranchChange,
  type KnownRepository,
  type RepositoryChanges,
  type SearchQuery,
  type SearchResult,
  type SearchSource,
  type SyncResult,
} from '@entity-git/core';
import { EntityGitError, fromHex, storeFor, type Storage, type Store } from '@entity-git/git';
import { nodeStorage } from '@entity-git/node-fs';
import Database from 'better-sqlite3';
import { INDEX_FILE, TextPacker, blobKey, ensureSchema } from './index-schema.js';
import { runSearch } from './run-search.js';

export interface SearchIndexOptions {
  /** The session root the repositories are in (absolute). Required. */
  root: string;
  /** The index file. Default `<root>/.entity-git-search.db`, beside the repositories. */
  file?: string;
  /** How the repositories are read. Default `nodeStorage()`. */
  storage?: Storage;
}

/** What one update or rebuild wrote into the index. */
export interface IndexUpdate {
  sessions: number;
  /** Messages new to the index. */
  added: number;
  /** Messages no branch holds any more, dropped. */
  removed: number;
}

/** What of a sync's result the index reads: the session, the branches it moved, HEAD. */
export type SyncDone = Pick<SyncResult, 'sessionId' | 'branchesMoved' | 'head'>;

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
  readonly #statements = new Map<string, Database.Statement>();
  readonly #packer: TextPacker;

  constructor(options: SearchIndexOptions) {
    this.root = options.root.replace(/\/+$/, '') || '/';
    if (!this.root.startsWith('/'))
      throw new EntityGitError('INVALID_OPTION', `the search index's root must be absolute, got ${this.root}`);
    this.file = options.file ?? join(this.root, INDEX_FILE);
    this.#store = storeFor(options.storage ?? nodeStorage());
    try {
      // The root may not exist before the first sync makes it; the index is as much at home there.
      mkdirSync(dirname(this.file), { recursive: true });
      this.#db = new Database(this.file);
      this.#db.pragma('busy_timeout = 10000');
      ensureSchema(this.#db);
      this.#packer = new TextPacker(this.#db);
    } catch (err) {
      throw indexError(err, `cannot open the search index ${this.file}`);
    }
  }

  /** Brings the index up to date with one session's repository (nothing when it has none yet). */
  update(sessionId: string): Promise<IndexUpdate> {
    return this.#serial(sessionId, () => this.#updateDir(join(this.root, sessionDirName(sessionId))));
  }

  /**
   * Brings the index up to date with what one sync wrote, from its result: only the branches it
   * moved are read (their refs, their new commits, trees and message files), and none when it
   * moved none. A session the index does not know yet is read whole, as `update` does.
   */
  afterSync(result: SyncDone): Promise<IndexUpdate> {
    const { sessionId, branchesMoved, head } = result;
    const dir = join(this.root, sessionDirName(sessionId));
    return this.#serial(sessionId, () => this.#updateDir(dir, { branches: branchesMoved, head }));
  }

  /**
   * Records a repository's changes that the caller read or wrote itself (the shape
   * `readRepositoryChanges` gives), in one transaction, as `update` would. `dir` is the
   * repository's directory under the root; the changes must start from the tips the index holds.
   */
  apply(dir: string, changes: RepositoryChanges): IndexUpdate {
    const done = this.#apply(dir, this.#tipsOf(dir), changes);
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
    return total;
  }

  async search(query: SearchQuery): Promise<SearchResult> {
    return runSearch(this.#db, this.#packer, query);
  }

  /**
   * Updates the index after every sync of `service` that wrote something (its `committed`
   * event). A failed update fails nothing else: it goes to `onError`, and the next update of
   * the session (or `reindex`) does its work. Returns the function that stops listening.
   */
  attach(service: Pick<MirrorService, 'on'>, onError?: (sessionId: string, error: EntityGitError) => void): () => void {
    return service.on('committed', ({ sessionId, result }) => {
      this.afterSync(result).catch((err: unknown) => onError?.(sessionId, indexError(err, 'search index update')));
    });
  }

  /**
   * The index's contents by what they mean, not by row ids: every session with its HEAD, branch
   * and tip; every message (blob) with its role, seq, places and words. Two indexes of the same
   * repositories answer alike exactly when their contents are equal (a rebuilt one and a live one).
   */
  contents(): { sessions: unknown[]; branches: unknown[]; messages: unknown[] } {
    const db = this.#db;
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.words_vocab USING fts5vocab(main, words, 'instance')`);
    const words = new Map<number, string[]>();
    for (const r of db.prepare(`SELECT term, doc FROM temp.words_vocab ORDER BY term`).iterate() as Iterable<{
      term: string;
      doc: number;
    }>) {
      words.set(r.doc, [...(words.get(r.doc) ?? []), r.term]);
    }
    const messages = (
      db
        .prepare(
          `SELECT d.id, s.session, printf('%016x', d.blob) AS blob, d.role, d.seq, d.node, d.body,
             (SELECT json_group_array(b.name || ' ' || p.turn || ' ' || lower(hex(t.commit_id)))
                FROM places p JOIN branches b ON b.id = p.branch
                JOIN turns t ON t.branch = p.branch AND t.turn = p.turn
                WHERE p.doc = d.id ORDER BY b.name) AS places
           FROM docs d JOIN sessions s ON s.id = d.session ORDER BY s.session, d.blob`,
        )
        .all() as { id: number; body: Uint8Array; session: string; blob: string; places: string }[]
    ).map(({ id, body, ...m }) => ({
      ...m,
      text: this.#packer.unpack(body),
      places: (JSON.parse(m.places) as string[]).sort(),
      words: words.get(id) ?? [],
    }));
    return {
      sessions: db.prepare(`SELECT session, dir, head FROM sessions ORDER BY session`).all(),
      branches: db
        .prepare(`SELECT s.session, b.name, b.tip FROM branches b JOIN sessions s ON s.id = b.session ORDER BY 1, 2`)
        .all(),
      messages,
    };
  }

  #sql(text: string): Database.Statement {
    let st = this.#statements.get(text);
    if (st === undefined) this.#statements.set(text, (st = this.#db.prepare(text)));
    return st;
  }

  /** Resolves when no update started by this instance is under way (before `close`). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.#running.values()]);
  }

  close(): void {
    this.#db.close();
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
      const applied = this.#apply(dir, known, changes);
      if (applied !== null) return applied;
    }
  }

  #tipsOf(dir: string): Map<string, string> {
    const rows = this.#sql(
      `SELECT b.name, b.tip FROM branches b JOIN sessions s ON s.id = b.session WHERE s.dir = ?`,
    ).all(dir) as { name: string; tip: string }[];
    return new Map(rows.map((r) => [r.name, r.tip]));
  }

  /** One transaction; null when another process moved the tips meanwhile (read again). */
  #apply(dir: string, known: Map<string, string>, c: RepositoryChanges): IndexUpdate | null {
    const run = this.#db.transaction((): IndexUpdate | null => {
      const now = this.#tipsOf(dir);
      if (now.size !== known.size || [...now].some(([b, t]) => known.get(b) !== t)) return null;
      this.#sql(
        `INSERT INTO sessions(session, dir, head) VALUES (?, ?, ?)
         ON CONFLICT(session) DO UPDATE SET dir = excluded.dir, head = excluded.head`,
      ).run(c.session, dir, c.head);
      const sid = (this.#sql(`SELECT id FROM sessions WHERE session = ?`).get(c.session) as { id: number }).id;
      // Messages a branch let go of: dropped at the end unless another branch still holds them.
      const loose = new Set<number>();
      for (const name of c.gone) {
        const gone = this.#sql(`SELECT id FROM branches WHERE session = ? AND name = ?`).get(sid, name) as {
          id: number;
        };
        this.#release(sid, gone.id, loose);
        this.#sql(`DELETE FROM branches WHERE id = ?`).run(gone.id);
      }
      let added = 0;
      for (const b of c.changed) added += this.#place(sid, b, loose);
      return { sessions: 1, added, removed: this.#dropUnplaced(loose) };
    });
    try {
      return run.immediate();
    } catch (err) {
      this.#packer.reset();
      throw indexError(err, `cannot update the search index ${this.file}`);
    }
  }

  /** Records a branch's new tip and places its messages; returns how many messages were new to the index. */
  #place(sid: number, b: BranchChange, loose: Set<number>): number {
    this.#sql(
      `INSERT INTO branches(session, name, tip) VALUES (?, ?, ?)
       ON CONFLICT(session, name) DO UPDATE SET tip = excluded.tip`,
    ).run(sid, b.name, b.tip);
    const bid = (this.#sql(`SELECT id FROM branches WHERE session = ? AND name = ?`).get(sid, b.name) as { id: number })
      .id;
    if (b.mode === 'replace') this.#release(sid, bid, loose);
    let added = 0;
    for (const m of b.messages) {
      const blob = blobKey(m.blob);
      let doc = (
        this.#sql(`SELECT id FROM docs WHERE session = ? AND seq = ? AND blob = ?`).get(sid, m.node.seq, blob) as
          | { id: number }
          | undefined
      )?.id;
      if (doc === undefined) {
        const role = ROLES.indexOf(m.node.role);
        doc = Number(
          this.#sql(`INSERT INTO docs(session, blob, role, seq, node, body) VALUES (?, ?, ?, ?, ?, ?)`).run(
            sid,
            blob,
            role,
            m.node.seq,
            m.node.id,
            this.#packer.pack(m.text),
          ).lastInsertRowid,
        );
        this.#sql(`INSERT INTO words(rowid, text) VALUES (?, ?)`).run(doc, m.text);
        added++;
      }
      this.#sql(`INSERT OR REPLACE INTO places(doc, branch, turn) VALUES (?, ?, ?)`).run(doc, bid, m.turn);
      // Both messages of a turn name its commit: one row, written again for the second.
      this.#sql(`INSERT OR REPLACE INTO turns(branch, turn, commit_id) VALUES (?, ?, ?)`).run(
        bid,
        m.turn,
        fromHex(m.commit),
      );
    }
    return added;
  }

  // A branch's places are found through its session's messages (a few hundred, by the docs
  // index): an index of places by branch would cost 12 bytes a message for this alone.
  #release(sid: number, bid: number, loose: Set<number>): void {
    const held = this.#sql(
      `SELECT p.doc FROM docs d JOIN places p ON p.doc = d.id AND p.branch = ? WHERE d.session = ?`,
    ).all(bid, sid) as { doc: number }[];
    for (const r of held) {
      loose.add(r.doc);
      this.#sql(`DELETE FROM places WHERE doc = ? AND branch = ?`).run(r.doc, bid);
    }
    this.#sql(`DELETE FROM turns WHERE branch = ?`).run(bid);
  }

  #dropUnplaced(docs: Set<number>): number {
    let removed = 0;
    for (const id of docs) {
      if (this.#sql(`SELECT 1 FROM places WHERE doc = ?`).get(id) !== undefined) continue;
      // A contentless index forgets a message by being told its words again: the text kept in docs.
      const { body } = this.#sql(`SELECT body FROM docs WHERE id = ?`).get(id) as { body: Uint8Array };
      this.#sql(`INSERT INTO words(words, rowid, text) VALUES ('delete', ?, ?)`).run(id, this.#packer.unpack(body));
      this.#sql(`DELETE FROM docs WHERE id = ?`).run(id);
      removed++;
    }
    return removed;
  }
}

function indexError(err: unknown, what: string): EntityGitError {
  if (err instanceof EntityGitError) return err;
  return new EntityGitError(
    'SEARCH_INDEX_ERROR',
    `${what}: ${(err as Error)?.message ?? String(err)}`,
    {},
    { cause: err },
  );
}
