import { searchWords } from '@entity-git/core';
import type Database from 'better-sqlite3';
import type { TextPacker } from './index-schema.js';

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
export function indexContents(db: Database.Database, packer: TextPacker): IndexContents {
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
        `SELECT d.id, s.session, printf('%08x', d.blob & 4294967295) AS blob, d.role, d.seq, d.node, d.body,
           (SELECT json_group_array(b.name || ' ' || p.turn || ' ' || lower(hex(t.commit_id)))
              FROM places p JOIN branches b ON b.id = p.branch
              JOIN turns t ON t.branch = p.branch AND t.turn = p.turn
              WHERE p.doc = d.id ORDER BY b.name) AS places
         FROM docs d JOIN sessions s ON s.id = d.session ORDER BY s.session, d.blob`,
      )
      .all() as { id: number; body: Uint8Array; session: string; blob: string; places: string }[]
  ).map(({ id, body, ...m }) => {
    const text = packer.unpack(body);
    // The words a query finds it by: those in the full-text index and the common ones it holds.
    const common = searchWords(text).filter((w) => packer.common().has(w));
    return {
      ...m,
      text,
      places: (JSON.parse(m.places) as string[]).sort(),
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
