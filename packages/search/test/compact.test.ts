import { MemoryDag } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { writeGolden } from '@entity-git/test-utils';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { indexOpener, placeOf, tempDir } from './helpers.js';

const indexOf = indexOpener();

/** The file's pages, free pages and FTS5 segments, read by a second connection. */
function layout(file: string) {
  const db = new Database(file, { readonly: true });
  const of = (sql: string) => Object.values(db.prepare(sql).get() as object)[0] as number;
  const out = {
    pageSize: of('PRAGMA page_size'),
    free: of('PRAGMA freelist_count'),
    segments: of('SELECT count(DISTINCT segid) FROM words_idx'),
  };
  db.close();
  return out;
}

describe('compact', () => {
  it('merges the full-text index into one segment and frees no page, with the same contents and hits', async () => {
    const dag = new MemoryDag();
    const root = tempDir();
    const mirror = createNodeMirror({ dag, root });
    const index = indexOf(root);
    // One update a session: each commit leaves FTS5 a segment of its own.
    for (const s of ['golden-1', 'golden-2', 'golden-3']) {
      await writeGolden(dag, { sessionId: s });
      await index.afterSync(await mirror.sync(s));
    }
    const before = layout(index.file);
    expect(before.pageSize).toBe(4096);
    expect(before.segments).toBeGreaterThan(1);
    const contents = index.contents();
    const queries = [{ text: 'todo', allBranches: true, limit: 100 }, { text: 'todo' }, { text: 'the', limit: 5 }];
    const answers = await Promise.all(queries.map((q) => index.search(q)));
    expect(answers[0]!.hits.length).toBe(18);

    index.compact();
    expect(layout(index.file)).toEqual({ pageSize: 4096, free: 0, segments: 1 });
    expect(index.contents()).toEqual(contents);
    const after = await Promise.all(queries.map((q) => index.search(q)));
    expect(after.map((a) => a.hits.map(placeOf))).toEqual(answers.map((a) => a.hits.map(placeOf)));
    expect(after).toEqual(answers);
    // Still updated as before: a reindex (which ends compacted) equals it.
    const rebuilt = indexOf(root, { file: `${tempDir()}/rebuilt.db` });
    await rebuilt.reindex();
    expect(rebuilt.contents()).toEqual(contents);
    expect(layout(rebuilt.file)).toEqual({ pageSize: 4096, free: 0, segments: 1 });
  });
});
