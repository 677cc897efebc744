import { join } from 'node:path';
import { MemoryDag } from '@entity-git/core';
import { EntityGitError } from '@entity-git/git';
import { createNodeMirror } from '@entity-git/node-fs';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { DICTIONARY_BYTES, INDEX_VERSION } from '../src/index-schema.js';
import { SearchIndex } from '../src/index.js';
import { tempDir, turnCommit } from './helpers.js';

const open: SearchIndex[] = [];
afterEach(() => {
  for (const i of open.splice(0)) i.close();
});
const indexOf = (root: string, file?: string) => {
  const index = new SearchIndex({ root, file });
  open.push(index);
  return index;
};

// A message of ~1.2 KB whose words vary with k (so no two messages are alike), and one word only it has.
const wordsOf = (k: number) =>
  `${Array.from({ length: 150 }, (_, j) => `w${(k * 7 + j * 13) % 97}x${j % 5}`).join(' ')} only${k}qz`;

describe('the text kept in the index (version 3)', () => {
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
    const kinds = db.prepare(`SELECT substr(body, 1, 1) AS k, count(*) AS n FROM docs GROUP BY k ORDER BY k`).all();
    const dictionary = db.prepare(`SELECT length(value) AS n FROM meta WHERE key = 'dictionary'`).get();
    db.close();
    expect(kinds.map((r) => (r as { n: number }).n).reduce((a, b) => a + b)).toBe(turns * 2);
    expect(kinds).toHaveLength(2);
    expect(dictionary).toEqual({ n: DICTIONARY_BYTES });
    // Each message's text, snippet and commit, from either kind of row, exactly.
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
    const rebuilt = indexOf(root, join(tempDir(), 'rebuilt.db'));
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
      indexOf(root, file);
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
