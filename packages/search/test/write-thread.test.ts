import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { INDEX_FILE } from '../src/index.js';
import { addTurn, expectEqualToReindex, goldens, indexOpener, placeOf, threadWarnings } from './helpers.js';

const indexOf = indexOpener();
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const CHILD = join(import.meta.dirname, 'thread-child.ts');
const nextTask = () => new Promise((r) => setImmediate(r));

/** A connection of the test's own holding the index file's write lock until `release`. */
function holdWriteLock(file: string) {
  const db = new Database(file);
  db.exec('BEGIN IMMEDIATE');
  return {
    release: () => {
      db.exec('ROLLBACK');
      db.close();
    },
  };
}

describe("the index's write thread", () => {
  it("records a sync's result while the syncing thread goes on, even when another connection holds the write lock", async () => {
    const { dag, root, mirror } = await goldens('golden-1');
    const index = indexOf(root);
    await index.afterSync(await mirror.sync('golden-1'));
    await addTurn(dag, 'golden-1', 'a6', 'p', 'pelican');
    const result = await mirror.sync('golden-1');
    // Recorded on the caller's thread, the update would wait for this lock there (the busy
    // timeout, 10 s) with the event loop stopped, so this test could not release it, and fail.
    const lock = holdWriteLock(join(root, INDEX_FILE));
    let settled = false;
    const done = index.afterSync(result).finally(() => {
      settled = true;
    });
    for (let k = 0; k < 5; k++) await nextTask();
    expect(settled).toBe(false);
    lock.release();
    expect(await done).toEqual({ sessions: 1, added: 2, removed: 0 });
    expect((await index.search({ text: 'pelican', branch: 'main' })).hits.map(placeOf)).toEqual([
      'golden-1/pa assistant main#4 [main]',
      'golden-1/pu user main#4 [main]',
    ]);
    await expectEqualToReindex(indexOf, root, index);
  });

  it('close waits for the batches the thread was sent; an update after it is refused', async () => {
    const { dag, root, mirror } = await goldens('golden-1');
    const index = indexOf(root, { batchMs: 60_000 });
    await index.afterSync(await mirror.sync('golden-1'));
    await addTurn(dag, 'golden-1', 'a6', 'q', 'quail');
    const lock = holdWriteLock(index.file);
    const result = await mirror.sync('golden-1');
    index.enqueue(result);
    void index.flush();
    await nextTask();
    lock.release();
    index.close();
    await expect(index.afterSync(result)).rejects.toMatchObject({ code: 'SEARCH_INDEX_ERROR' });
    await expect(index.update('golden-1')).rejects.toMatchObject({ code: 'SEARCH_INDEX_ERROR' });
    const reopened = indexOf(root, { writeThread: false });
    expect((await reopened.search({ text: 'quail', branch: 'main' })).hits.map(placeOf)).toEqual([
      'golden-1/qa assistant main#4 [main]',
      'golden-1/qu user main#4 [main]',
    ]);
  });

  it('a thread that cannot run leaves the recording to the calling thread, with one warning', async () => {
    const { dag, root, mirror } = await goldens('golden-1');
    const index = indexOf(root);
    await mirror.sync('golden-1');
    await index.update('golden-1');
    // The thread opens the file after this: a version it refuses, so it fails as it starts.
    const other = new Database(index.file);
    other.prepare(`UPDATE meta SET value = 5 WHERE key = 'version'`).run();
    await addTurn(dag, 'golden-1', 'a6', 'r', 'raven');
    expect(await index.afterSync(await mirror.sync('golden-1'))).toEqual({ sessions: 1, added: 2, removed: 0 });
    await addTurn(dag, 'golden-1', 'ra', 's', 'swift');
    expect(await index.afterSync(await mirror.sync('golden-1'))).toEqual({ sessions: 1, added: 2, removed: 0 });
    other.prepare(`UPDATE meta SET value = 6 WHERE key = 'version'`).run();
    other.close();
    await nextTask();
    expect(threadWarnings.splice(0)).toEqual([
      expect.stringMatching(/records on the calling thread from now on: .*search index version 5, expected 6/),
    ]);
    expect((await index.search({ text: 'swift', branch: 'main' })).hits.map(placeOf)).toEqual([
      'golden-1/sa assistant main#5 [main]',
      'golden-1/su user main#5 [main]',
    ]);
    await expectEqualToReindex(indexOf, root, index);
  });

  it('keeps a process alive while an update is awaited, and not after', () => {
    const child = spawnSync(process.execPath, ['--import', TSX, '--conditions=source', CHILD], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(child.stderr).toBe('');
    expect({ status: child.status, out: child.stdout }).toEqual({
      status: 0,
      out: '{"sessions":1,"added":2,"removed":0}\n',
    });
  });
});
