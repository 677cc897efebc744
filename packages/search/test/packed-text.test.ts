import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { MemoryDag, type DagNode, type PlacedMessage } from '@entity-git/core';
import { EntityGitError } from '@entity-git/git';
import { createNodeMirror } from '@entity-git/node-fs';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { DICTIONARY_BYTES, INDEX_VERSION } from '../src/index-schema.js';
import { indexOpener, tempDir, turnCommit } from './helpers.js';

const indexOf = indexOpener();

// A message of ~1.2 KB whose words vary with k (so no two messages are alike), and one word only it has.
const wordsOf = (k: number) =>
  `${Array.from({ length: 150 }, (_, j) => `w${(k * 7 + j * 13) % 97}x${j % 5}`).join(' ')} only${k}qz`;

/** Session `s`'s messages 1..n as a reader of its repository would place them (one per turn), each with `pelican` and a word of its own. */
function placed(n: number): PlacedMessage[] {
  return Array.from({ length: n }, (_, i) => {
    const seq = i + 1;
    const hex = createHash('sha1').update(`m${seq}`).digest('hex');
    const text = `pelican ${wordsOf(seq)}`;
    const node = {
      id: `m${seq}`,
      session_id: 's',
      seq,
      role: 'user',
      content: text,
      predecessor: null,
      caller: null,
      created_at: 1779500000,
      metadata: null,
    } as DagNode;
    return { blob: hex, node, text, turn: seq, commit: hex };
  });
}

/**
 * How many messages the index holds, and how many are exactly their text deflated against the
 * kept dictionary (a message deflated alone inflates the same with it, but deflates otherwise),
 * counted by their group's body: the first row of a group holds it, its other rows none.
 */
function againstDictionary(db: Database.Database): { messages: number; exact: number } {
  const dictionary = (db.prepare(`SELECT value FROM meta WHERE key = 'dictionary'`).get() as { value: Buffer }).value;
  const rows = db.prepare(`SELECT body FROM docs ORDER BY id`).all() as { body: Buffer | null }[];
  let exact = 0;
  let group = false;
  for (const r of rows) {
    if (r.body !== null) group = deflateRawSync(inflateRawSync(r.body, { dictionary }), { dictionary }).equals(r.body);
    if (group) exact++;
  }
  return { messages: rows.length, exact };
}

describe('the text kept in the index (version 5)', () => {
  it('leaves the common words out of the full-text index, finds them by reading, and forgets a dropped message whole', async () => {
    const root = tempDir();
    const index = indexOf(root);
    const dir = join(root, 's');
    const all = placed(80);
    const tip1 = all.at(-1)!.commit;
    const first = { session: 's', head: 'main', gone: [], tips: new Map([['main', tip1]]) };
    expect(
      index.apply(dir, { ...first, changed: [{ name: 'main', tip: tip1, mode: 'replace', messages: all }] }),
    ).toEqual({ sessions: 1, added: 80, removed: 0 });
    const db = new Database(index.file, { readonly: true });
    expect(
      JSON.parse((db.prepare(`SELECT value FROM meta WHERE key = 'common'`).get() as { value: string }).value),
    ).toContain('pelican');
    const vocab = (term: string) => {
      db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.v USING fts5vocab(main, words, 'row')`);
      return (db.prepare(`SELECT doc FROM temp.v WHERE term = ?`).get(term) as { doc: number } | undefined)?.doc ?? 0;
    };
    // The messages kept before the dictionary (and the common words) existed were kept again with
    // them: none lists the common word, each is its text deflated against the dictionary.
    expect(vocab('pelican')).toBe(0);
    expect(vocab('only1qz')).toBe(1);
    expect(againstDictionary(db)).toEqual({ messages: 80, exact: 80 });
    const page = await index.search({ text: 'pelican', limit: 5 });
    expect(page.hits.map((h) => h.node)).toEqual(['m80', 'm79', 'm78', 'm77', 'm76']);
    expect(page.more).toBe(true);
    expect((await index.search({ text: `pelican only${80}qz` })).hits.map((h) => h.node)).toEqual(['m80']);
    // main committed again with 60 messages: the other 20 leave, every word of theirs with them.
    const tip2 = createHash('sha1').update('again').digest('hex');
    const again = { session: 's', head: 'main', gone: [], tips: new Map([['main', tip2]]) };
    expect(
      index.apply(dir, {
        ...again,
        changed: [{ name: 'main', tip: tip2, mode: 'replace', messages: all.slice(0, 60) }],
      }),
    ).toEqual({ sessions: 1, added: 0, removed: 20 });
    expect(vocab('only80qz')).toBe(0);
    expect(vocab('only60qz')).toBe(1);
    expect((await index.search({ text: 'pelican', limit: 2 })).hits.map((h) => h.node)).toEqual(['m60', 'm59']);
    db.close();
  });

  it('keeps every message exactly, before and after the dictionary is made, and a rebuild and a second reader agree', async () => {
    const dag = new MemoryDag();
    await dag.createSession({ id: 's1' });
    const turns = 40;
    let prev: string | null = null;
    for (let t = 1; t <= turns; t++) {
      for (const role of ['user', 'assistant'] as const) {
        const id = `${role[0]}${t}`;
        await dag.appendNode({
          id,
          session_id: 's1',
          role,
          content: wordsOf(t * 2 + (role === 'user' ? 0 : 1)),
          predecessor: prev,
        });
        prev = id;
      }
    }
    const root = tempDir();
    const mirror = createNodeMirror({ dag, root });
    const index = indexOf(root);
    // Two syncs: the first turns' text (less than the dictionary's window) is kept alone, the rest against the dictionary.
    await index.afterSync(await mirror.sync('s1'));
    expect(index.contents().messages).toHaveLength(turns * 2);
    const texts = index.contents().messages.map((m) => (m as { text: string }).text);
    expect(texts.join('').length).toBeGreaterThan(DICTIONARY_BYTES * 2);
    const db = new Database(index.file, { readonly: true });
    const dictionary = db.prepare(`SELECT length(value) AS n FROM meta WHERE key = 'dictionary'`).get();
    expect(againstDictionary(db)).toEqual({ messages: turns * 2, exact: turns * 2 });
    db.close();
    expect(dictionary).toEqual({ n: DICTIONARY_BYTES });
    // Each message's text, snippet and commit, kept before the dictionary or after, exactly (turn 40 in the second block of turns).
    const dir = join(root, 's1');
    for (const k of [2, 81]) {
      const { hits } = await index.search({ text: `only${k}qz` });
      expect(hits).toHaveLength(1);
      const h = hits[0]!;
      expect([h.node, h.role, h.turn, h.seq]).toEqual([
        k % 2 ? `a${k >> 1}` : `u${k >> 1}`,
        k % 2 ? 'assistant' : 'user',
        k >> 1,
        k - 1,
      ]);
      expect(h.commit).toBe(turnCommit(dir, 'main', k >> 1));
      expect(h.snippet.endsWith(`only${k}qz`)).toBe(true);
    }
    const rebuilt = indexOf(root, { file: join(tempDir(), 'rebuilt.db') });
    await rebuilt.reindex();
    expect(index.contents()).toEqual(rebuilt.contents());
    // Another reader of the same file (another process would be the same) inflates with the kept dictionary.
    expect(indexOf(root).contents()).toEqual(index.contents());
  });

  it('refuses an index file of an earlier version with SEARCH_INDEX_ERROR, and leaves it as it was', () => {
    const root = tempDir();
    const file = join(root, 'old.db');
    const old = new Database(file);
    old.exec(`CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID; INSERT INTO meta VALUES ('version', 2)`);
    old.close();
    let error: unknown;
    try {
      indexOf(root, { file });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(EntityGitError);
    expect((error as EntityGitError).code).toBe('SEARCH_INDEX_ERROR');
    expect((error as Error).message).toContain(`version 2, expected ${INDEX_VERSION}`);
    const after = new Database(file, { readonly: true });
    expect(after.prepare(`SELECT name FROM sqlite_schema ORDER BY name`).all()).toEqual([{ name: 'meta' }]);
    after.close();
  });
});
