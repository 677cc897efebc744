import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { searchWords } from '@entity-git/core';
import type Database from 'better-sqlite3';

/** The index file's name in the session root: a leading dot, which no session directory has (ids are escaped). */
export const INDEX_FILE = '.entity-git-search.db';
/**
 * 6: the new messages of a turn on a branch deflated together, in the first one's row (a group:
 * the rows after it with no body are its other messages); pages of 4 KiB.
 * (5: a branch's commit ids kept a block of 32 turns a row; a message's first branch by its number
 * in the session; no byte of a message saying how its text was deflated; the words in a quarter
 * of the messages the dictionary was made from left out of the full-text index (half in 4);
 * pages of 16 KiB.
 * 4: the words in at least half the messages the dictionary was made from are not in the
 * full-text index, a message known by its blob id's first 4 bytes within its session and seq.
 * 3: every word in the full-text index, 8 bytes of the blob id. 2: each message's text deflated
 * alone, its commit id on each of its places.)
 */
export const INDEX_VERSION = 6;

/** At most this many messages share a deflated body, and at most about this much text (a longer message is a group alone). */
export const GROUP_MAX = 16;
export const GROUP_CHARS = 8192;

/** Turns a `turns` row holds: turn t's commit id is bytes 20·(t mod 32) of row (branch, t div 32). */
export const TURN_BLOCK = 32;

// docs.body: the search text of a group of messages — the new messages of one turn on a branch,
// inserted one after the other (at most GROUP_MAX, about GROUP_CHARS of text) — framed (their
// count and the lengths of all but the last, then the texts) and deflated together by zlib
// against meta's 'dictionary' (alone while there is none), in the group's first row; its other
// rows, which follow it, have none (a NULL, no byte). What a hit's check and its snippet read,
// from this file alone. One deflate a group: one dictionary set up (what a call costs most) and
// one block's code tables, where a message alone paid both. node: the
// node id a hit names, as `packNodeId` keeps it (a UUID or hex id as bytes, any other as text). blob: the message file's blob id's first 4 bytes,
// which tell apart the messages of one session at one seq (a seq has one message a branch, so
// only a node committed again in another form shares it: two such files sharing 4 bytes, about
// 1 in 2^32). A message is found by (session, seq), then its blob: that index is smaller than
// one holding the blob, and serves every look-up by session.
// docs.branch, docs.turn: the first branch to hold a message (by its number in the session,
// branches.n: 0 for a session's first branch, which SQLite keeps in no byte, where a row id of
// thousands took 2) and its turn there (null once that branch let it go); places: where else
// (another branch by its row id, its turn) — most messages are on one branch, and two columns of
// a row cost 2–4 bytes where a row of places cost 15.
// turns: each turn's commit on a branch, once, TURN_BLOCK turns a row (20 bytes a turn at its
// slot, zeros where a turn has none; the row only as long as its last turn): a row a turn cost
// ~34 bytes, most of them the key and the row's framing.
// words: contentless (the text is in docs.body, once) and detail=none (which messages hold a
// word, not where: the snippet is cut from the body), columnsize=0 (no per-message length row:
// nothing ranks by it). It is given a message's distinct words less meta's 'common' ones (every
// word of a message kept alone, body byte 0). A message leaves it by the 'delete' command, given
// the same words again, from the body.
// remove_diacritics 0 and the categories: the words the JavaScript side (`searchWords`) sees.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS sessions(
  id INTEGER PRIMARY KEY, session TEXT NOT NULL UNIQUE, dir TEXT NOT NULL, head TEXT);
CREATE INDEX IF NOT EXISTS sessions_dir ON sessions(dir);
CREATE TABLE IF NOT EXISTS branches(
  id INTEGER PRIMARY KEY, session INTEGER NOT NULL, name TEXT NOT NULL, tip TEXT NOT NULL, n INTEGER NOT NULL,
  UNIQUE(session, name), UNIQUE(session, n));
CREATE TABLE IF NOT EXISTS docs(
  id INTEGER PRIMARY KEY, session INTEGER NOT NULL, blob INTEGER NOT NULL, role INTEGER NOT NULL,
  seq INTEGER NOT NULL, node TEXT NOT NULL, body BLOB, branch INTEGER, turn INTEGER);
CREATE INDEX IF NOT EXISTS docs_seq ON docs(session, seq);
CREATE TABLE IF NOT EXISTS places(
  doc INTEGER NOT NULL, branch INTEGER NOT NULL, turn INTEGER NOT NULL,
  PRIMARY KEY(doc, branch)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS turns(
  branch INTEGER NOT NULL, block INTEGER NOT NULL, commits BLOB NOT NULL,
  PRIMARY KEY(branch, block)) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS words USING fts5(
  text, content='', columnsize=0, detail=none,
  tokenize="unicode61 remove_diacritics 0 categories 'L* N* M* Co'");
`;

/** Creates the tables a new index file needs; refuses a file of another version, before touching it. */
export function ensureSchema(db: Database.Database): void {
  // A new file only (an existing one keeps its pages): 4 KiB pages. A commit writes each page it
  // changed (about ten an update) to the write-ahead log and a checkpoint writes them back and
  // syncs: 4 KiB pages write a quarter of 16 KiB's, and a page that splits under an update (a
  // compacted file's are full) adds a quarter as much. They leave a few bytes a message more
  // unused than 16 KiB.
  db.pragma('page_size = 4096');
  db.pragma('journal_mode = WAL');
  // A checkpoint every 4,000 pages: a log of 16 MiB at most, as SQLite's default 1,000 pages of 16
  // KiB were, its two syncs shared by four times as many updates.
  db.pragma('wal_autocheckpoint = 4000');
  // WAL with NORMAL: a commit is not synced to disk, a checkpoint is (two fsyncs). A process
  // killed at any point loses nothing committed; the operating system's crash or a power cut may
  // lose the last updates, which the next update reads again from the tips the index holds, but
  // never leaves a file whose pages disagree (OFF could: hits missing with no error, for ~0.3 ms
  // an unbatched update saves on average; a batch shares its checkpoints).
  db.pragma('synchronous = NORMAL');
  db.pragma('temp_store = MEMORY');
  db.exec(`CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID`);
  const row = db.prepare(`SELECT value FROM meta WHERE key = 'version'`).get() as { value: number } | undefined;
  if (row !== undefined && row.value !== INDEX_VERSION)
    throw new Error(`search index version ${row.value}, expected ${INDEX_VERSION}: delete the file and reindex`);
  db.exec(SCHEMA);
  if (row === undefined) db.prepare(`INSERT INTO meta(key, value) VALUES ('version', ?)`).run(INDEX_VERSION);
}

/** How much text the index sees before it makes its dictionary: zlib's window. */
export const DICTIONARY_BYTES = 32 * 1024;

/**
 * A group's texts as the index keeps them, and back. A message is a few hundred bytes, too short
 * for deflate to find much to repeat in itself; against a dictionary of the index's first 32 KB of
 * text (the words and phrasing the messages share) it is about a fifth smaller, and a turn's
 * messages deflated together share the dictionary's set-up and one block's code tables. The dictionary is
 * made once, in the transaction that brings that much text, and never changes; the common words
 * are found in the same text, at the same time, and the messages kept before then are kept again
 * as every later one is, so no byte of a message needs to say how it was kept. `reset` after a
 * transaction that failed, whose dictionary may not have been kept.
 */
export class TextPacker {
  readonly #db: Database.Database;
  #dictionary: Buffer | null = null;
  #common: ReadonlySet<string> = new Set();
  #seen: Buffer[] = [];
  #seenBytes = 0;

  constructor(db: Database.Database) {
    this.#db = db;
  }

  /**
   * Inside a write transaction: a group's texts as its first row keeps them. `learn`: the texts
   * count toward the dictionary while there is none (not when a group is kept again without a
   * message it dropped).
   */
  pack(texts: readonly string[], learn = true): Buffer {
    const parts = texts.map((t) => Buffer.from(t, 'utf8'));
    const dictionary = this.#dictionary ?? this.#load() ?? (learn ? this.#learn(parts) : null);
    return deflate(frame(parts), dictionary);
  }

  /** What the full-text index is given for a message: its distinct words less the common ones (none before the dictionary). */
  indexed(text: string): string {
    this.#dictionary ?? this.#load();
    return [...new Set(searchWords(text))].filter((w) => !this.#common.has(w)).join(' ');
  }

  /** The words of a query the full-text index can narrow by: all but the common ones. */
  narrowing(words: readonly string[]): string[] {
    this.#dictionary ?? this.#load();
    return words.filter((w) => !this.#common.has(w));
  }

  /** The common words (none before the dictionary is made). */
  common(): ReadonlySet<string> {
    this.#dictionary ?? this.#load();
    return this.#common;
  }

  /** A group's texts, in the order of its rows. */
  unpack(body: Uint8Array): string[] {
    const dictionary = this.#dictionary ?? this.#load();
    return unframe(dictionary === null ? inflateRawSync(body) : inflateRawSync(body, { dictionary }));
  }

  reset(): void {
    this.#dictionary = null;
    this.#common = new Set();
  }

  #load(): Buffer | null {
    const rows = this.#db.prepare(`SELECT key, value FROM meta WHERE key IN ('dictionary', 'common')`).all() as {
      key: string;
      value: Buffer | string;
    }[];
    this.#dictionary = (rows.find((r) => r.key === 'dictionary')?.value as Buffer | undefined) ?? null;
    const common = rows.find((r) => r.key === 'common')?.value as string | undefined;
    this.#common = new Set(common === undefined ? [] : (JSON.parse(common) as string[]));
    return this.#dictionary;
  }

  // Gathers text until there is a window's worth, then keeps it as the dictionary (the first
  // process to get there wins; the others load its).
  #learn(parts: readonly Buffer[]): Buffer | null {
    for (const bytes of parts) {
      this.#seen.push(bytes);
      this.#seenBytes += bytes.byteLength;
    }
    if (this.#seenBytes < DICTIONARY_BYTES) return null;
    const made = Buffer.concat(this.#seen).subarray(0, DICTIONARY_BYTES);
    const common = commonWords(this.#seen.map((b) => b.toString('utf8')));
    this.#seen = [];
    this.#seenBytes = 0;
    const keep = this.#db.prepare(`INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)`);
    if (keep.run('dictionary', made).changes === 1) {
      keep.run('common', JSON.stringify(common));
      this.#again(made, new Set(common));
    }
    return this.#load();
  }

  // The messages kept before the dictionary (deflated alone, every word of theirs in the
  // full-text index: at most a few hundred), kept again against it, less the common words; a
  // group's rows follow its first, which holds the body.
  #again(dictionary: Buffer, common: ReadonlySet<string>): void {
    const forget = this.#db.prepare(`INSERT INTO words(words, rowid, text) VALUES ('delete', ?, ?)`);
    const add = this.#db.prepare(`INSERT INTO words(rowid, text) VALUES (?, ?)`);
    const body = this.#db.prepare(`UPDATE docs SET body = ? WHERE id = ?`);
    const rows = this.#db.prepare(`SELECT id, body FROM docs ORDER BY id`).all() as {
      id: number;
      body: Buffer | null;
    }[];
    for (let k = 0; k < rows.length; ) {
      const first = rows[k]!;
      const framed = inflateRawSync(first.body!);
      const texts = unframe(framed);
      for (const text of texts) {
        const words = [...new Set(searchWords(text))];
        forget.run(rows[k]!.id, words.join(' '));
        add.run(rows[k]!.id, words.filter((w) => !common.has(w)).join(' '));
        k++;
      }
      body.run(deflate(framed, dictionary), first.id);
    }
  }
}

// A group's texts as one buffer: their count and the byte lengths of all but the last (LEB128),
// then the texts.
function frame(parts: readonly Buffer[]): Buffer {
  const head: number[] = [];
  const varint = (n: number) => {
    for (; n >= 0x80; n = Math.floor(n / 0x80)) head.push((n % 0x80) | 0x80);
    head.push(n);
  };
  varint(parts.length);
  for (const p of parts.slice(0, -1)) varint(p.byteLength);
  return Buffer.concat([Buffer.from(head), ...parts]);
}

function unframe(framed: Buffer): string[] {
  let at = 0;
  const varint = () => {
    let n = 0;
    for (let scale = 1; ; scale *= 0x80) {
      const b = framed[at++]!;
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
    }
  };
  const count = varint();
  const lengths = Array.from({ length: count - 1 }, varint);
  const texts: string[] = [];
  for (const n of lengths) {
    texts.push(framed.toString('utf8', at, at + n));
    at += n;
  }
  texts.push(framed.toString('utf8', at));
  return texts;
}

// An output chunk of zlib's 16 KiB default is allocated for every call; a group's is smaller.
const deflate = (framed: Buffer, dictionary: Buffer | null): Buffer =>
  dictionary === null
    ? deflateRawSync(framed, { chunkSize: CHUNK })
    : deflateRawSync(framed, { dictionary, chunkSize: CHUNK });

/**
 * The words in at least a quarter of `texts`: their lists in the full-text index would name one
 * message in four or more (a byte each) and narrow little a query reads; a query of them alone
 * finds its page among the newest messages (a page of 20 in ~80 rows; two such words, ~320).
 */
function commonWords(texts: readonly string[]): string[] {
  // Too few messages (a few long ones) say nothing of what most messages hold.
  if (texts.length < COMMON_SAMPLE) return [];
  const counts = new Map<string, number>();
  for (const t of texts) for (const w of new Set(searchWords(t))) counts.set(w, (counts.get(w) ?? 0) + 1);
  return [...counts]
    .filter(([, n]) => COMMON_SHARE * n >= texts.length)
    .map(([w]) => w)
    .sort();
}

const COMMON_SAMPLE = 20;
const COMMON_SHARE = 4;
const CHUNK = 1024;

/** The key a message is known by at its session and seq: its blob id's first 4 bytes, as a signed integer (4 bytes in SQLite). */
export const blobKey = (blob: string): number => Number.parseInt(blob.slice(0, 8), 16) | 0;

/**
 * A node id as the index keeps it: a lowercase UUID as a tag byte and its 16 bytes (17 against 36),
 * an even run of at least 8 lowercase hex digits as a tag byte and its bytes; any other id (upper
 * case, odd, any other character) as its text. Only forms that print back to the same string
 * are packed, so every id round-trips exactly.
 */
export function packNodeId(id: string): string | Buffer {
  if (UUID.test(id)) return Buffer.concat([UUID_TAG, Buffer.from(id.replaceAll('-', ''), 'hex')]);
  if (HEX.test(id)) return Buffer.concat([HEX_TAG, Buffer.from(id, 'hex')]);
  return id;
}

/** The node id `packNodeId` kept. */
export function unpackNodeId(kept: string | Uint8Array): string {
  if (typeof kept === 'string') return kept;
  const hex = Buffer.from(kept.buffer, kept.byteOffset + 1, kept.byteLength - 1).toString('hex');
  if (kept[0] === HEX_TAG[0]) return hex;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HEX = /^(?:[0-9a-f]{2}){4,}$/;
const UUID_TAG = Buffer.from([1]);
const HEX_TAG = Buffer.from([2]);

/** A connection's statements, each prepared on its first use and kept: one per index, shared by its reads and writes. */
export type Prepared = (text: string) => Database.Statement;

export function preparedOnce(db: Database.Database): Prepared {
  const statements = new Map<string, Database.Statement>();
  return (text) => {
    let st = statements.get(text);
    if (st === undefined) statements.set(text, (st = db.prepare(text)));
    return st;
  };
}
