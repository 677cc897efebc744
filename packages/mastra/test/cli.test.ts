// The entity-git CLI on Mastra's storage, with no configuration: a libSQL file and a PostgreSQL
// database written by the real Mastra packages, mirrored through the `entity-git` process as the
// package mirrors them, and no command changes a row.
import { join } from 'node:path';
import { LibSQLStore } from '@mastra/libsql';
import { PostgresStore } from '@mastra/pg';
import { createNodeMirror } from '@entity-git/node-fs';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { json, run } from '../../cli/test/fixture.js';
import { expectedDag } from './helpers/expected-dag.js';
import { expectConversationRepos } from './helpers/expectations.js';
import { cleanupDirs, git, judged, refs, tempDir } from './helpers/git.js';
import { haveConversations, scriptedAgent, turn } from './helpers/mastra-agent.js';
import { freshDatabase, PG_URL } from './helpers/postgres.js';
import { postgresTableHashes, sqliteTableHashes } from './helpers/table-hashes.js';

// Each case runs the CLI several times; a machine under load makes that slow.
vi.setConfig({ testTimeout: 600_000 });

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await cleanupDirs();
});

const recognised = (what: string) =>
  `entity-git: recognised the "mastra" schema: Mastra's storage (${what}: mastra_threads + mastra_messages); read as it is, never written\n`;

/** What every reading command does on the store: the same repositories as the package, nothing written. */
async function mirrorsThroughCli(
  db: string,
  storage: LibSQLStore | PostgresStore,
  hashes: () => Promise<Record<string, string>>,
  line: string,
): Promise<void> {
  const before = await hashes();
  const root = tempDir();
  const eg = (...args: string[]) => run(['--db', db, '--root', root, ...args]);
  const synced = await eg('sync');
  expect({ code: synced.code, stderr: synced.stderr }).toEqual({ code: 0, stderr: line });
  expect(synced.stdout).toBe('1/2 trip backfilled\n2/2 notes backfilled\nsynced 2 sessions: 2 backfilled, 0 failed\n');
  await expectConversationRepos(storage, (id) => join(root, id));
  // The commits of the DAG written from Mastra's own API.
  const expected = await expectedDag(storage, ['trip', 'notes']);
  const other = createNodeMirror({ dag: expected, root: tempDir() });
  for (const id of ['trip', 'notes']) {
    await other.sync(id);
    expect(refs(join(root, id))).toEqual(refs(other.repoPath(id)));
    expect(judged(join(root, id))).toEqual({ fsck: '', status: '' });
  }
  for (const args of [['verify'], ['log', 'trip'], ['show', 'trip', '1'], ['branches', 'trip']]) {
    const r = await eg(...args);
    expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: line });
  }
  expect(git(join(root, 'trip'), 'log', '--format=%s', 'main').trim().split('\n')).toEqual([
    'turn 2: And tomorrow?',
    'turn 1: What is the weather in Paris and Rome?',
  ]);
  const asJson = json(await eg('sync', '--json'));
  expect([asJson.recognised, asJson.counts.unchanged]).toEqual(['mastra', 2]);
  expect(await hashes()).toEqual(before);
  // A command that writes rows is refused, the database untouched.
  const refused = await eg('projects', 'create', 'x', root);
  expect([refused.code, refused.stderr.split('\n').at(-2)]).toEqual([
    2,
    "entity-git: the database is Mastra's storage, which entity-git reads and never writes",
  ]);
  // It has no projects either: a command that reads them says so.
  const listed = await eg('projects', 'list');
  expect([listed.code, listed.stderr.split('\n').at(-2)]).toEqual([
    2,
    "entity-git: this database (mastra) has no entity-git tables: projects live in entity-git's own database",
  ]);
  // Another turn, then sync: the repository catches up (reconcile's "repaired"), one commit more on main.
  await turn(scriptedAgent(storage), 'trip', 'Read the trip note');
  const after = json(await eg('sync', '--json'));
  expect(after.counts).toEqual({ unchanged: 1, backfilled: 0, repaired: 1, empty: 0, busy: 0, failed: 0 });
  expect(git(join(root, 'trip'), 'log', '-1', '--format=%s', 'main').trim()).toBe('turn 3: Read the trip note');
}

describe('entity-git on Mastra storage, with no configuration', () => {
  it('a libSQL file written by the real Mastra: recognised, mirrored as the package does, never written', async () => {
    const dir = tempDir();
    const file = join(dir, 'mastra.db');
    const storage = new LibSQLStore({ url: `file:${file}` });
    await haveConversations(scriptedAgent(storage));
    await mirrorsThroughCli(file, storage, async () => sqliteTableHashes(file), recognised('@mastra/libsql'));
  });

  it.skipIf(PG_URL === undefined)('a PostgreSQL database written by the real Mastra: the same', async () => {
    const database = await freshDatabase();
    const storage = new PostgresStore({ connectionString: database.url });
    await storage.init();
    cleanups.push(database.drop, () => storage.close());
    await haveConversations(scriptedAgent(storage));
    await mirrorsThroughCli(database.url, storage, () => postgresTableHashes(database.url), recognised('@mastra/pg'));
  });
});
