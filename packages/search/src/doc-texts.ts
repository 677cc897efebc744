import type Database from 'better-sqlite3';
import { GROUP_MAX, type Prepared, type TextPacker } from './index-schema.js';

/** A group of messages deflated together: its first row (which holds the body) and each message's id and text. */
export interface DocGroup {
  first: number;
  members: { id: number; text: string }[];
}

/**
 * Reads messages' texts from their groups (index-schema.ts: the rows of a group follow its first,
 * which holds the body). It keeps the last group it inflated, so the messages of one group read
 * one after the other (a page of hits, newest first) inflate it once: one per read of the index
 * (a query, a write's drops), as a group may be kept again after a write.
 */
export class DocTexts {
  readonly #packer: TextPacker;
  readonly #back: Database.Statement;
  readonly #from: Database.Statement;
  #first = -1;
  #texts: string[] = [];

  constructor(sql: Prepared, packer: TextPacker) {
    this.#packer = packer;
    this.#back = sql(`SELECT id, body FROM docs WHERE id <= ? ORDER BY id DESC LIMIT ${GROUP_MAX}`);
    this.#from = sql(`SELECT id, body FROM docs WHERE id >= ? ORDER BY id LIMIT ${GROUP_MAX}`);
  }

  /** The text of message `id`, whose row's body is `body` (null: it is in the group of a row before it). */
  text(id: number, body: Uint8Array | null): string {
    if (body !== null) return this.#group(id, body)[0]!;
    const rows = this.#back.all(id) as { id: number; body: Uint8Array | null }[];
    const at = rows.findIndex((r) => r.body !== null);
    return this.#group(rows[at]!.id, rows[at]!.body!)[at]!;
  }

  /** The whole group message `id` is in. */
  group(id: number): DocGroup {
    const back = this.#back.all(id) as { id: number; body: Uint8Array | null }[];
    const first = back.find((r) => r.body !== null)!;
    const texts = this.#group(first.id, first.body!);
    const rows = this.#from.all(first.id) as { id: number }[];
    return { first: first.id, members: texts.map((text, k) => ({ id: rows[k]!.id, text })) };
  }

  #group(first: number, body: Uint8Array): string[] {
    if (this.#first !== first) {
      this.#texts = this.#packer.unpack(body);
      this.#first = first;
    }
    return this.#texts;
  }
}
