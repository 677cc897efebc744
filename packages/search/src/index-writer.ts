import { ROLES, type BranchChange, type PlacedMessage, type RepositoryChanges } from '@entity-git/core';
import { fromHex } from '@entity-git/git';
import { DocTexts } from './doc-texts.js';
import {
  GROUP_CHARS,
  GROUP_MAX,
  TURN_BLOCK,
  blobKey,
  packNodeId,
  type Prepared,
  type TextPacker,
} from './index-schema.js';
import type { IndexUpdate } from './search-types.js';

/** A branch of the index: its row id (places and turns name it by) and its number in its session (a message's row names it by). */
interface Branch {
  id: number;
  n: number;
}

/**
 * What a repository's changes write into the index's tables (docs/design.md, 'Search'), inside a
 * transaction its caller opened and whose tips it checked: the session and its branches, each new
 * message's row, words and text, each turn's commit, and the messages no branch holds any more
 * dropped. One per `SearchIndex`, sharing its prepared statements.
 */
export class IndexWriter {
  readonly #packer: TextPacker;
  readonly #sql: Prepared;

  constructor(packer: TextPacker, sql: Prepared) {
    this.#packer = packer;
    this.#sql = sql;
  }

  /** Inside a transaction that checked the tips: the changes recorded. */
  record(dir: string, c: RepositoryChanges): IndexUpdate {
    const had = this.#sql(`SELECT id, dir, head FROM sessions WHERE session = ?`).get(c.session) as
      | { id: number; dir: string; head: string | null }
      | undefined;
    // Unchanged (most turns): no write, so its page is not written out again at the commit.
    const sid =
      had !== undefined && had.dir === dir && had.head === c.head
        ? had.id
        : (
            this.#sql(
              `INSERT INTO sessions(session, dir, head) VALUES (?, ?, ?)
               ON CONFLICT(session) DO UPDATE SET dir = excluded.dir, head = excluded.head RETURNING id`,
            ).get(c.session, dir, c.head) as { id: number }
          ).id;
    // Messages a branch let go of: dropped at the end unless another branch still holds them.
    const loose = new Set<number>();
    for (const name of c.gone) {
      const gone = this.#sql(`SELECT id, n FROM branches WHERE session = ? AND name = ?`).get(sid, name) as Branch;
      this.#release(sid, gone, loose);
      this.#sql(`DELETE FROM branches WHERE id = ?`).run(gone.id);
    }
    let added = 0;
    for (const b of c.changed) added += this.#place(sid, b, loose);
    return { sessions: 1, added, removed: this.#dropUnplaced(loose) };
  }

  /** Records a branch's new tip and places its messages; returns how many messages were new to the index. */
  #place(sid: number, b: BranchChange, loose: Set<number>): number {
    // A new branch takes the next number in its session: the one a message's row names it by.
    const branch = this.#sql(
      `INSERT INTO branches(session, name, tip, n)
       VALUES (?, ?, ?, (SELECT coalesce(max(n) + 1, 0) FROM branches WHERE session = ?))
       ON CONFLICT(session, name) DO UPDATE SET tip = excluded.tip RETURNING id, n`,
    ).get(sid, b.name, b.tip, sid) as Branch;
    if (b.mode === 'replace') this.#release(sid, branch, loose);
    let added = 0;
    // The messages new to the index, a turn's at a time: inserted together, one after the other.
    const group: PlacedMessage[] = [];
    // A turn's messages name its commit alike: its slot is written (or checked) once.
    let turn = '';
    for (const m of b.messages) {
      const blob = blobKey(m.blob);
      const row = this.#sql(`SELECT id, branch FROM docs WHERE session = ? AND seq = ? AND blob = ?`).get(
        sid,
        m.node.seq,
        blob,
      ) as { id: number; branch: number | null } | undefined;
      if (row === undefined) {
        if (!joins(group, m)) added += this.#insert(sid, branch.n, group.splice(0));
        group.push(m);
      } else if (row.branch === null || row.branch === branch.n) {
        this.#sql(`UPDATE docs SET branch = ?, turn = ? WHERE id = ?`).run(branch.n, m.turn, row.id);
        // Held in its row now: never in places too.
        if (row.branch === null) this.#sql(`DELETE FROM places WHERE doc = ? AND branch = ?`).run(row.id, branch.id);
      } else
        this.#sql(`INSERT OR REPLACE INTO places(doc, branch, turn) VALUES (?, ?, ?)`).run(row.id, branch.id, m.turn);
      if (turn !== `${m.turn} ${m.commit}`) this.#recordTurn(branch.id, m.turn, m.commit);
      turn = `${m.turn} ${m.commit}`;
    }
    return added + this.#insert(sid, branch.n, group);
  }

  /** A group of new messages' rows, one after the other, the first holding their texts deflated together. */
  #insert(sid: number, n: number, group: readonly PlacedMessage[]): number {
    if (group.length === 0) return 0;
    let body: Buffer | null = this.#packer.pack(group.map((m) => m.text));
    for (const m of group) {
      const doc = Number(
        this.#sql(
          `INSERT INTO docs(session, blob, role, seq, node, body, branch, turn) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(sid, blobKey(m.blob), ROLES.indexOf(m.node.role), m.node.seq, packNodeId(m.node.id), body, n, m.turn)
          .lastInsertRowid,
      );
      this.#sql(`INSERT INTO words(rowid, text) VALUES (?, ?)`).run(doc, this.#packer.indexed(m.text));
      body = null;
    }
    return group.length;
  }

  /** Keeps a turn's commit id at its slot of its block's row (both messages of a turn name it: written once). */
  #recordTurn(bid: number, turn: number, commit: string): void {
    const block = Math.floor(turn / TURN_BLOCK);
    const at = (turn % TURN_BLOCK) * 20;
    const row = this.#sql(`SELECT commits FROM turns WHERE branch = ? AND block = ?`).get(bid, block) as
      | { commits: Buffer }
      | undefined;
    const id = fromHex(commit);
    const had = row?.commits ?? Buffer.alloc(0);
    if (had.byteLength >= at + 20 && Buffer.compare(had.subarray(at, at + 20), id) === 0) return;
    const commits = Buffer.alloc(Math.max(had.byteLength, at + 20));
    commits.set(had);
    commits.set(id, at);
    this.#sql(`INSERT OR REPLACE INTO turns(branch, block, commits) VALUES (?, ?, ?)`).run(bid, block, commits);
  }

  // A branch's places are found through its session's messages (a few hundred, by the docs
  // index): an index of places by branch would cost 12 bytes a message for this alone.
  #release(sid: number, branch: Branch, loose: Set<number>): void {
    const first = this.#sql(`SELECT id FROM docs WHERE session = ? AND branch = ?`).all(sid, branch.n) as {
      id: number;
    }[];
    for (const r of first) loose.add(r.id);
    this.#sql(`UPDATE docs SET branch = NULL, turn = NULL WHERE session = ? AND branch = ?`).run(sid, branch.n);
    const held = this.#sql(
      `SELECT p.doc FROM docs d JOIN places p ON p.doc = d.id AND p.branch = ? WHERE d.session = ?`,
    ).all(branch.id, sid) as { doc: number }[];
    for (const r of held) {
      loose.add(r.doc);
      this.#sql(`DELETE FROM places WHERE doc = ? AND branch = ?`).run(r.doc, branch.id);
    }
    this.#sql(`DELETE FROM turns WHERE branch = ?`).run(branch.id);
  }

  // A dropped message's group is kept again without it, in its first row left: no text of a
  // message the index let go of stays behind.
  #dropUnplaced(docs: Set<number>): number {
    const drop = [...docs].filter(
      (id) =>
        this.#sql(`SELECT 1 FROM docs WHERE id = ? AND branch IS NOT NULL`).get(id) === undefined &&
        this.#sql(`SELECT 1 FROM places WHERE doc = ?`).get(id) === undefined,
    );
    if (drop.length === 0) return 0;
    const texts = new DocTexts(this.#sql, this.#packer);
    const groups = new Map(drop.map((id) => texts.group(id)).map((g) => [g.first, g]));
    const dropped = new Set(drop);
    for (const g of groups.values())
      for (const m of g.members.filter((m) => dropped.has(m.id))) {
        // A contentless index forgets a message by being told its words again: from its text.
        this.#sql(`INSERT INTO words(words, rowid, text) VALUES ('delete', ?, ?)`).run(
          m.id,
          this.#packer.indexed(m.text),
        );
        this.#sql(`DELETE FROM docs WHERE id = ?`).run(m.id);
      }
    for (const g of groups.values()) {
      const left = g.members.filter((m) => !dropped.has(m.id));
      if (left.length > 0)
        this.#sql(`UPDATE docs SET body = ? WHERE id = ?`).run(
          this.#packer.pack(
            left.map((m) => m.text),
            false,
          ),
          left[0]!.id,
        );
    }
    return drop.length;
  }
}

/** Whether new message `m` joins `group`: the same turn, and the group not full. */
function joins(group: readonly PlacedMessage[], m: PlacedMessage): boolean {
  if (group.length === 0) return true;
  if (group.length === GROUP_MAX || group[0]!.turn !== m.turn) return false;
  return group.reduce((n, g) => n + g.text.length, m.text.length) <= GROUP_CHARS;
}
