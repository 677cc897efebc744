// The SQLite file openSqlite creates (and SQLite's -wal and -shm beside it) is 0600 whatever the
// umask: it holds every conversation. A file that exists keeps the mode its owner gave it.
import { chmodSync, closeSync, mkdtempSync, openSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqlite } from '../src/index.js';

let dir = '';
let umask = 0;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'eg-sqlite-mode-'));
  umask = process.umask(0);
});
afterEach(() => {
  process.umask(umask);
  rmSync(dir, { recursive: true, force: true });
});

const modes = () =>
  readdirSync(dir)
    .sort()
    .map((f) => `${f} ${(statSync(join(dir, f)).mode & 0o777).toString(8)}`);

describe('openSqlite', () => {
  it('creates the database 0600 under umask 000, and SQLite its -wal and -shm alike', async () => {
    const store = await openSqlite({ file: join(dir, 'dag.db') });
    expect(modes()).toEqual(['dag.db 600', 'dag.db-shm 600', 'dag.db-wal 600']);
    await store.close();
  });

  it('leaves the mode of a file that exists', async () => {
    closeSync(openSync(join(dir, 'mine.db'), 'w'));
    chmodSync(join(dir, 'mine.db'), 0o640);
    const store = await openSqlite({ file: join(dir, 'mine.db') });
    await store.close();
    expect(modes()[0]).toBe('mine.db 640');
  });
});
