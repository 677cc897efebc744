import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgres, openSqlite, watchDagChanges } from '../src/index.js';
import { freshDatabase } from './helpers/postgres.js';
import { tempDir } from './helpers/temp.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('watchDagChanges on SQLite (data_version)', () => {
  it('every session first, then only what another connection committed; an active session again at each change', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const file = join(tmp.dir, 'dag.db');
    const own = await openSqlite({ file });
    cleanups.push(() => own.close());
    for (const id of ['a', 'b', 'c']) await own.writer.createSession({ id, created_at: 1 });
    await own.writer.appendNode({ id: 'a1', session_id: 'a', role: 'user', content: 'x' });
    const reader = await openSqlite({ file, migrate: false, checkSchema: true });
    cleanups.push(() => reader.close());
    const changes = await watchDagChanges(reader, { activeWindowMs: 3_600_000 });
    cleanups.push(() => changes.close());
    expect(changes.method).toBe('data_version');
    expect((await changes.poll()).sort()).toEqual(['a', 'b', 'c']);
    expect(await changes.poll()).toEqual([]);

    // Another connection (another program) appends to b: only b.
    await own.writer.appendNode({ id: 'b1', session_id: 'b', role: 'user', content: 'y' });
    expect(await changes.poll()).toEqual(['b']);
    expect(await changes.poll()).toEqual([]);
    // A fill in place changes no count or seq: b is active, so it is reported with the change.
    const raw = new Database(file);
    raw.prepare(`update nodes set content = '"filled"' where id = 'b1'`).run();
    raw.close();
    expect(await changes.poll()).toEqual(['b']);
    // A new session is reported.
    await own.writer.createSession({ id: 'd', created_at: 2 });
    expect((await changes.poll()).sort()).toEqual(['b', 'd']);
  });
});

describe('watchDagChanges on PostgreSQL', () => {
  it('polling without a channel; LISTEN with one, where NOTIFY names the session', async () => {
    const database = await freshDatabase();
    cleanups.push(database.drop);
    const store = await openPostgres({ connectionString: database.url });
    cleanups.push(() => store.close());
    for (const id of ['a', 'b']) await store.writer.createSession({ id, created_at: 1 });

    const polling = await watchDagChanges(store);
    cleanups.push(() => polling.close());
    expect(polling.method).toBe('polling');
    expect((await polling.poll()).sort()).toEqual(['a', 'b']);
    await store.writer.appendNode({ id: 'a1', session_id: 'a', role: 'user', content: 'x' });
    expect(await polling.poll()).toEqual(['a']);
    expect(await polling.poll()).toEqual([]);

    const listening = await watchDagChanges(store, { channel: 'dag_changed', connectionString: database.url });
    cleanups.push(() => listening.close());
    expect(listening.method).toBe('listen dag_changed');
    expect((await listening.poll()).sort()).toEqual(['a', 'b']);
    expect(await listening.poll()).toEqual([]);
    const woken = listening.wait(600_000);
    await store.writer.appendNode({ id: 'b1', session_id: 'b', role: 'user', content: 'y' });
    const { sql } = await import('kysely');
    await sql`select pg_notify('dag_changed', 'b')`.execute(store.db);
    await woken; // resolves at the notification (the test would time out otherwise)
    expect(await listening.poll()).toEqual(['b']);
    // An empty payload: every session is compared.
    await store.writer.appendNode({ id: 'a2', session_id: 'a', role: 'user', content: 'z' });
    const again = listening.wait(600_000);
    await sql`select pg_notify('dag_changed', '')`.execute(store.db);
    await again;
    expect(await listening.poll()).toContain('a');
    await expect(
      watchDagChanges(store, { channel: 'bad channel', connectionString: database.url }),
    ).rejects.toMatchObject({ code: 'INVALID_OPTION' });
  });
});
