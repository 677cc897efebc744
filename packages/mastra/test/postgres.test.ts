import { join } from 'node:path';
import { createNodeMirror } from '@entity-git/node-fs';
import { LibSQLStore } from '@mastra/libsql';
import { PostgresStore } from '@mastra/pg';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { MASTRA_POSTGRES_NAME, openMastraPostgres, openMastraSqlite, type MastraStore } from '../src/index.js';
import { expectedDag } from './helpers/expected-dag.js';
import { expectConversationRepos } from './helpers/expectations.js';
import { cleanupDirs, git, judged, refs, tempDir } from './helpers/git.js';
import { haveConversations, scriptedAgent, turn } from './helpers/mastra-agent.js';
import { freshDatabase, PG_URL } from './helpers/postgres.js';
import { postgresTableHashes } from './helpers/table-hashes.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await cleanupDirs();
});

/** A fresh database with Mastra's PostgresStore on it (in `schemaName` when given). */
async function mastraPostgres(schemaName?: string): Promise<{ url: string; storage: PostgresStore }> {
  const database = await freshDatabase();
  const storage = new PostgresStore({ connectionString: database.url, ...(schemaName ? { schemaName } : {}) });
  await storage.init();
  cleanups.push(database.drop, () => storage.close());
  return { url: database.url, storage };
}

async function open(url: string, schema?: string): Promise<MastraStore> {
  const store = await openMastraPostgres({ connectionString: url, ...(schema ? { schema } : {}) });
  cleanups.push(() => store.close());
  return store;
}

describe.skipIf(PG_URL === undefined)('Mastra on PostgreSQL, mirrored', () => {
  it('gives one repository per thread, as native git reads it, and writes nothing to the database', async () => {
    const { url, storage } = await mastraPostgres();
    const setup = scriptedAgent(storage);
    await haveConversations(setup);
    const before = await postgresTableHashes(url);
    expect(Object.keys(before)).toEqual(expect.arrayContaining(['public.mastra_messages', 'public.mastra_threads']));
    const store = await open(url);
    expect(store.name).toBe(MASTRA_POSTGRES_NAME);
    const mirror = createNodeMirror({ dag: store.dag, root: tempDir() });
    for (const id of await store.dag.listSessions()) await mirror.sync(id);
    await expectConversationRepos(storage, (id) => mirror.repoPath(id));
    expect(await postgresTableHashes(url)).toEqual(before);

    const other = createNodeMirror({ dag: await expectedDag(storage, ['trip', 'notes']), root: tempDir() });
    for (const id of ['trip', 'notes']) {
      await other.sync(id);
      expect(refs(mirror.repoPath(id))).toEqual(refs(other.repoPath(id)));
    }

    // Live: another turn, synced again, equals a fresh backfill; main moved forward by one.
    const tip = refs(mirror.repoPath('notes')).main!;
    await turn(setup, 'notes', 'And tomorrow?', { stream: true });
    expect((await mirror.sync('notes')).commitsWritten).toBe(1);
    expect(git(mirror.repoPath('notes'), 'rev-parse', 'main~1').trim()).toBe(tip);
    const fresh = createNodeMirror({ dag: store.dag, root: tempDir() });
    await fresh.sync('notes');
    expect(refs(fresh.repoPath('notes'))).toEqual(refs(mirror.repoPath('notes')));
    expect(judged(mirror.repoPath('notes'))).toEqual({ fsck: '', status: '' });
  });

  it('the same threads on libSQL and on PostgreSQL give the same commit ids, whatever zone the writer ran in', async () => {
    const file = join(tempDir(), 'mastra.db');
    const libsql = new LibSQLStore({ url: `file:${file}` });
    await haveConversations(scriptedAgent(libsql));
    const { url, storage } = await mastraPostgres();
    // Copied through Mastra's own API, by a writer far from UTC: PostgresStore then keeps the
    // writer's wall-clock time in "createdAt" and the instant in "createdAtZ".
    const zone = process.env.TZ;
    process.env.TZ = 'America/New_York';
    try {
      for (const threadId of ['trip', 'notes']) {
        await storage.saveThread({ thread: (await libsql.getThreadById({ threadId }))! });
        await storage.saveMessages({ messages: await libsql.getMessages({ threadId, format: 'v2' }), format: 'v2' });
      }
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query(
      `select count(*)::int as n, count(*) filter (where "createdAt" <> ("createdAtZ" at time zone 'UTC'))::int as shifted
         from mastra_messages`,
    );
    await client.end();
    // Every message carries the writer's wall clock, not the instant (how many rows a streamed
    // turn leaves is Mastra's business: at least the 8 messages of the two threads).
    expect(rows[0].n).toBeGreaterThanOrEqual(8);
    expect(rows[0].shifted).toBe(rows[0].n);

    const fromFile = await openMastraSqlite({ file });
    cleanups.push(() => fromFile.close());
    const fromPg = await open(url);
    const a = createNodeMirror({ dag: fromFile.dag, root: tempDir() });
    const b = createNodeMirror({ dag: fromPg.dag, root: tempDir() });
    for (const id of ['trip', 'notes']) {
      await a.sync(id);
      await b.sync(id);
      expect(refs(b.repoPath(id))).toEqual(refs(a.repoPath(id)));
    }
    expect(Object.keys(refs(a.repoPath('trip')))).toEqual(['main']);
  });

  it('reads the tables in the schema given to PostgresStore, and nothing can be written through its connection', async () => {
    const { url, storage } = await mastraPostgres('app_memory');
    await haveConversations(scriptedAgent(storage));
    await expect((await open(url)).dag.listSessions()).rejects.toMatchObject({ code: 'SCHEMA_MISMATCH' });
    const store = await open(url, 'app_memory');
    expect(await store.dag.listSessions()).toEqual(['trip', 'notes']);
    const mirror = createNodeMirror({ dag: store.dag, root: tempDir() });
    for (const id of ['trip', 'notes']) await mirror.sync(id);
    await expectConversationRepos(storage, (id) => mirror.repoPath(id));
    await expect(sql`update app_memory.mastra_threads set title = 'changed'`.execute(store.db)).rejects.toMatchObject({
      code: '25006',
    });
  });
});
