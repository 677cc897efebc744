import { searchWords } from '@entity-git/core';
import { toHex } from '@entity-git/git';
import type Database from 'better-sqlite3';
import { DocTexts } from './doc-texts.js';
import { unpackNodeId, type Prepared, type TextPacker } from './index-schema.js';
import { placesOf as placesSql } from './run-search.js';

/** An index's contents by meaning (see `SearchIndex.contents`). */
export interface IndexContents {
  sessions: unknown[];
  branches: unknown[];
  messages: unknown[];
}

/**
 * The index's contents by what they mean, not by row ids: every session with its HEAD, branch
 * and tip; every message (blob key) with its role, seq, places, text and the words a query finds
 * it by. Two indexes of the same repositories answer alike exactly when their contents are equal.
 */
export function indexContents(db: Database.Database, sql: Prepared, packer: TextPacker): IndexContents {
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.words_vocab USING fts5vocab(main, words, 'instance')`);
  const words = new Map<number, string[]>();
  for (const r of db.prepare(`SELECT term, doc FROM temp.words_vocab ORDER BY term`).iterate() as Iterable<{
    term: string;
    doc: number;
  }>) {
    words.set(r.doc, [...(words.get(r.doc) ?? []), r.term]);
  }
  const placesOf = db.prepare(placesSql(''));
  const rows = db
    .prepare(
      `SELECT d.id, s.session, printf('%08x', d.blob & 4294967295) AS blob, d.role, d.seq, d.node, d.body
       FROM docs d JOIN sessions s ON s.id = d.session ORDER BY s.session, d.blob`,
    )
    .all() as { id: number; body: Uint8Array | null; session: string; blob: string; node: string | Uint8Array }[];
  const texts = new DocTexts(sql, packer);
  const messages = rows.map(({ id, body, node, ...m }) => {
    const text = texts.text(id, body);
    // The words a query finds it by: those in the full-text index and the common ones it holds.
    const common = searchWords(text).filter((w) => packer.common().has(w));
    const places = placesOf.all(id, id) as { name: string; turn: number; commit_id: Uint8Array }[];
    return {
      ...m,
      node: unpackNodeId(node),
      text,
      // Which branch holds it in its row and which in places is the order they came in: not meaning.
      places: places.map((p) => `${p.name} ${p.turn} ${toHex(p.commit_id)}`).sort(),
      words: [...new Set([...(words.get(id) ?? []), ...common])].sort(),
    };
  });
  return {
    sessions: db.prepare(`SELECT session, dir, head FROM sessions ORDER BY session`).all(),
    branches: db
      .prepare(`SELECT s.session, b.name, b.tip FROM branches b JOIN sessions s ON s.id = b.session ORDER BY 1, 2`)
      .all(),
    messages,
  };
}
