import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type Database from 'better-sqlite3';

/** The index file's name in the session root: a leading dot, which no session directory has (ids are escaped). */
export const INDEX_FILE = '.entity-git-search.db';
/** 2: each message's text kept in the index (compressed), so a page of hits reads no repository. */
export const INDEX_VERSION = 2;

// docs.body: the message's search text, deflated (zlib's raw deflate): what a hit's check and its
// snippet read, from this file alone. node: the node id a hit names.
// words: contentless (the text is in docs.body, once) and detail=none (which messages hold a
// word, not where: the snippet is cut from the body), columnsize=0 (no per-message length row:
// nothing ranks by it). A message leaves it by the 'delete' command, given its text from the body.
// remove_diacritics 0 and the categories: the words the JavaScript side (`searchWords`) sees.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sessions(
  id INTEGER PRIMARY KEY, session TEXT NOT NULL UNIQUE, dir TEXT NOT NULL, head TEXT);
CREATE INDEX IF NOT EXISTS sessions_dir ON sessions(dir);
CREATE TABLE IF NOT EXISTS branches(
  id INTEGER PRIMARY KEY, session INTEGER NOT NULL, name TEXT NOT NULL, tip TEXT NOT NULL,
  UNIQUE(session, name));
CREATE TABLE IF NOT EXISTS docs(
  id INTEGER PRIMARY KEY, session INTEGER NOT NULL, blob BLOB NOT NULL UNIQUE, role INTEGER NOT NULL,
  seq INTEGER NOT NULL, node TEXT NOT NULL, body BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS docs_session ON docs(session);
CREATE TABLE IF NOT EXISTS places(
  doc INTEGER NOT NULL, branch INTEGER NOT NULL, turn INTEGER NOT NULL, commit_id BLOB NOT NULL,
  PRIMARY KEY(doc, branch)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS places_branch ON places(branch);
CREATE VIRTUAL TABLE IF NOT EXISTS words USING fts5(
  text, content='', columnsize=0, detail=none,
  tokenize="unicode61 remove_diacritics 0 categories 'L* N* M* Co'");
`;

/** Creates the tables a new index file needs; refuses a file of another version. */
export function ensureSchema(db: Database.Database): void {
  db.pragma('journal_mode = WAL');
  // WAL with NORMAL: a commit is not synced to disk (a crash may lose the last updates, never
  // corrupt the file; the next update or a reindex brings them back from the repositories).
  db.pragma('synchronous = NORMAL');
  db.pragma('temp_store = MEMORY');
  db.exec(SCHEMA);
  const row = db.prepare(`SELECT value FROM meta WHERE key = 'version'`).get() as { value: number } | undefined;
  if (row === undefined) db.prepare(`INSERT INTO meta(key, value) VALUES ('version', ?)`).run(INDEX_VERSION);
  else if (row.value !== INDEX_VERSION) throw new Error(`search index version ${row.value}, expected ${INDEX_VERSION}`);
}

/** A message's text as the index keeps it. */
export const packText = (text: string): Buffer => deflateRawSync(text);
/** The text back from `packText`. */
export const unpackText = (body: Uint8Array): string => inflateRawSync(body).toString('utf8');
