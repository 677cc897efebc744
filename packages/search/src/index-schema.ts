import type Database from 'better-sqlite3';

/** The index file's name in the session root: a leading dot, which no session directory has (ids are escaped). */
export const INDEX_FILE = '.entity-git-search.db';
export const INDEX_VERSION = 1;

// detail=none: the index keeps which messages hold a word, not where; phrases and snippets are
// taken from the message itself (read from git), so positions would only cost disk.
// contentless: the text stays in the repositories; the index is no second copy of it.
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
  seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS places(
  doc INTEGER NOT NULL, branch INTEGER NOT NULL, turn INTEGER NOT NULL, commit_id BLOB NOT NULL,
  PRIMARY KEY(doc, branch)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS places_branch ON places(branch);
CREATE VIRTUAL TABLE IF NOT EXISTS words USING fts5(
  text, content='', contentless_delete=1, detail=none,
  tokenize="unicode61 remove_diacritics 0 categories 'L* N* M* Co'");
`;

/** Creates the tables a new index file needs; refuses a file of another version. */
export function ensureSchema(db: Database.Database): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(SCHEMA);
  const row = db.prepare(`SELECT value FROM meta WHERE key = 'version'`).get() as { value: number } | undefined;
  if (row === undefined) db.prepare(`INSERT INTO meta(key, value) VALUES ('version', ?)`).run(INDEX_VERSION);
  else if (row.value !== INDEX_VERSION) throw new Error(`search index version ${row.value}, expected ${INDEX_VERSION}`);
}
