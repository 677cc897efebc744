import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_BUSY_TIMEOUT_MS, openSqlite, type SqlStore } from '../src/index.js';
import { tempDir } from './helpers/temp.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function open(options: { busyTimeoutMs?: number } = {}): Promise<SqlStore> {
  const tmp = tempDir();
  cleanups.push(tmp.remove);
  const store = await openSqlite({ file: join(tmp.dir, 'pragmas.sqlite'), ...options });
  cleanups.push(() => store.close());
  return store;
}

// Read through the store's own connection: kysely over better-sqlite3 has a single connection.
async function pragma(store: SqlStore, name: 'journal_mode' | 'busy_timeout' | 'foreign_keys'): Promise<unknown> {
  const { rows } = await sql<Record<string, unknown>>`pragma ${sql.raw(name)}`.execute(store.db);
  expect(rows).toHaveLength(1);
  return Object.values(rows[0]!)[0];
}

describe('openSqlite connection pragmas', () => {
  it('runs in WAL mode', async () => {
    const store = await open();
    expect(await pragma(store, 'journal_mode')).toBe('wal');
  });

  it('sets the busy timeout to DEFAULT_BUSY_TIMEOUT_MS when no option is given', async () => {
    const store = await open();
    expect(DEFAULT_BUSY_TIMEOUT_MS).toBe(10_000);
    expect(await pragma(store, 'busy_timeout')).toBe(DEFAULT_BUSY_TIMEOUT_MS);
  });

  it('sets the busy timeout to busyTimeoutMs when given', async () => {
    const store = await open({ busyTimeoutMs: 1234 });
    expect(await pragma(store, 'busy_timeout')).toBe(1234);
    expect(await pragma(store, 'journal_mode')).toBe('wal');
  });

  it('turns foreign keys on', async () => {
    const store = await open();
    expect(await pragma(store, 'foreign_keys')).toBe(1);
  });
});
