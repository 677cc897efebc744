import { join } from 'node:path';
import { searchText, sessionDirName, type BranchChange } from '@entity-git/core';
import type { EntityGitError } from '@entity-git/git';
import type Database from 'better-sqlite3';
import type { Prepared, TextPacker } from './index-schema.js';
import { IndexWriter } from './index-writer.js';
import { indexError, type IndexUpdate, type SyncDone } from './search-types.js';

/**
 * What became of one sync's result: recorded from the messages it carries, left to be read from
 * its repository (null: it does not start from the tips the index holds, or carries no messages),
 * or failed.
 */
export type Carried = IndexUpdate | null | EntityGitError;

/** `work` in a write transaction of its own; a failure is the index's error, and forgets a dictionary made in it. */
export function inWriteTransaction<T>(db: Database.Database, packer: TextPacker, work: () => T): T {
  try {
    return db.transaction(work).immediate();
  } catch (err) {
    packer.reset();
    throw indexError(err, `cannot update the search index ${db.name}`);
  }
}

/**
 * Records syncs' results from the messages they carry, on one connection to the index (the
 * index's write thread's, or the caller's own): no repository is read. A result is a promise
 * about the repository, not a second source of truth: each is checked against the tips the index
 * holds, inside the transaction that records it.
 */
export class CarriedWrites {
  readonly #root: string;
  readonly #db: Database.Database;
  readonly #sql: Prepared;
  readonly #packer: TextPacker;
  readonly #writer: IndexWriter;

  constructor(o: { root: string; db: Database.Database; sql: Prepared; packer: TextPacker }) {
    this.#root = o.root;
    this.#db = o.db;
    this.#sql = o.sql;
    this.#packer = o.packer;
    this.#writer = new IndexWriter(o.packer, o.sql);
  }

  /**
   * The results in one transaction, in order. No savepoint each: FTS5 writes its pending words
   * out as a segment at every savepoint, which is what one transaction for the batch saves. When
   * that transaction fails, each is recorded alone (a transaction of its own), so one bad result
   * fails no other.
   */
  record(results: readonly SyncDone[]): Carried[] {
    if (results.length > 1) {
      try {
        return inWriteTransaction(this.#db, this.#packer, () => results.map((r) => this.#fromResult(r)));
      } catch {
        // Each alone, below.
      }
    }
    return results.map((r) => {
      try {
        return inWriteTransaction(this.#db, this.#packer, () => this.#fromResult(r));
      } catch (err) {
        return err as EntityGitError;
      }
    });
  }

  /**
   * Inside a transaction: the changes a sync's result carries recorded, when every branch it moved
   * starts from the tip the index holds (read in the same transaction: no other check); else null.
   */
  #fromResult(r: SyncDone): IndexUpdate | null {
    const extended = r.extendedBranches ?? [];
    if (extended.length === 0 || extended.length !== r.branchesMoved.length) return null;
    const dir = join(this.#root, sessionDirName(r.sessionId));
    // The session and its tips in one statement (a session has a branch once it is known).
    const rows = this.#sql(
      `SELECT s.session, b.name, b.tip FROM sessions s JOIN branches b ON b.session = s.id WHERE s.dir = ?`,
    ).all(dir) as { session: string; name: string; tip: string }[];
    if (rows.length === 0) return null;
    const known = new Map(rows.map((row) => [row.name, row.tip]));
    if (extended.some((b) => known.get(b.name) !== b.from)) return null;
    const tips = new Map(known);
    const changed: BranchChange[] = extended.map((b) => {
      tips.set(b.name, b.tip);
      const messages = b.messages.map((m) => ({ ...m, text: searchText(m.node) }));
      return { name: b.name, tip: b.tip, mode: 'extend', messages };
    });
    return this.#writer.record(dir, { session: rows[0]!.session, head: r.head, changed, gone: [], tips });
  }
}
