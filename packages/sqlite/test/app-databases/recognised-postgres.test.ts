// The recognised stores of the applications that run on PostgreSQL (the OpenAI Agents SDK's
// SQLAlchemy session, Open WebUI's chat and chat_message tables), in the real PostgreSQL with
// those applications' DDL: recognised with no configuration, mirrored to the very commits the
// same rows give in SQLite, for every column type such a store may have, and never written.
import { join } from 'node:path';
import { reconcile } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { afterAll, describe, expect, it } from 'vitest';
import { type SqlStore, openPostgres, openSqlite } from '../../src/index.js';
import { freshDatabase } from '../helpers/postgres.js';
import { pgSnapshot } from '../helpers/pg-snapshot.js';
import { tempDir } from '../helpers/temp.js';
import { PG_STORES, type PgTypes, pgExec } from './fixtures/recognised-postgres.js';
import {
  WEBUI_MESSAGES_DDL,
  agentsSdkDb,
  make,
  openWebuiDb,
  openWebuiMessagesRows,
} from './fixtures/recognised-stores.js';
import { webuiCoverageRows } from './fixtures/webui-coverage.js';
import { assertHealthy, refsOf, repoFacts } from './repo-facts.js';

const tmp = tempDir('entity-git-recognised-pg-');
const drops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const drop of drops) await drop();
  tmp.remove();
});

const SQLITE = {
  'openai-agents': agentsSdkDb,
  'open-webui': openWebuiDb,
  // The main fixture and the coverage chats (an archived chat in ms, content as parts, an empty reply row).
  'open-webui-messages': (file: string) =>
    make(file, [...WEBUI_MESSAGES_DDL, ...openWebuiMessagesRows(), ...webuiCoverageRows()]),
};

/** Every session of a store mirrored by a start-up reconcile: the actions and each repository's refs. */
async function mirror(store: SqlStore, root: string) {
  const report = await reconcile({ dag: store.dag, mirror: createNodeMirror({ dag: store.dag, root }) });
  const refs: Record<string, Record<string, string>> = {};
  for (const e of report.entries) if (e.action === 'backfilled') refs[e.sessionId] = refsOf(join(root, e.sessionId));
  return { actions: report.entries.map((e) => [e.sessionId, e.action]), refs };
}

async function sqliteMirror(schema: keyof typeof SQLITE) {
  const file = join(tmp.dir, `${schema}.sqlite`);
  SQLITE[schema](file);
  const store = await openSqlite({ file });
  try {
    return await mirror(store, join(tmp.dir, `${schema}-sqlite`));
  } finally {
    await store.close();
  }
}

/**
 * The store made in a fresh PostgreSQL database (rows written in UTC; `zone`, when given, then
 * the database's own time zone, so every later session reads in it), mirrored, and the database
 * snapshotted before and after.
 */
async function postgresMirror(schema: keyof typeof PG_STORES, types: PgTypes, zone?: string) {
  const { url, drop } = await freshDatabase();
  drops.push(drop);
  const name = new URL(url).pathname.slice(1);
  await pgExec(url, [
    "set time zone 'UTC'",
    ...PG_STORES[schema](types),
    ...(zone ? [`alter database "${name}" set timezone to '${zone}'`] : []),
  ]);
  const before = await pgSnapshot(url);
  const store = await openPostgres({ connectionString: url });
  expect(store.recognised).toBe(schema);
  const root = join(tmp.dir, `${schema}-pg-${types.json ?? ''}${types.time ?? ''}${zone ? '-zoned' : ''}`);
  try {
    const out = await mirror(store, root);
    return { ...out, root };
  } finally {
    await store.close();
    expect(await pgSnapshot(url)).toBe(before);
  }
}

const CASES: [keyof typeof PG_STORES, PgTypes, string | undefined][] = [
  ['openai-agents', {}, undefined],
  ['openai-agents', {}, 'America/New_York'],
  ['openai-agents', { time: 'timestamptz' }, 'Asia/Kolkata'],
  ['open-webui', {}, undefined],
  ['open-webui', { json: 'jsonb' }, undefined],
  ['open-webui', { json: 'text' }, undefined],
  ['open-webui-messages', {}, undefined],
  ['open-webui-messages', { json: 'jsonb' }, undefined],
  ['open-webui-messages', { json: 'text' }, undefined],
];

describe('recognised application stores on PostgreSQL', () => {
  const expected = new Map<string, Awaited<ReturnType<typeof sqliteMirror>>>();

  for (const [schema, types, zone] of CASES) {
    it(`${schema} (${JSON.stringify(types)}${zone ? `, read in ${zone}` : ''}): the commits of the same rows in SQLite; no row written`, async () => {
      if (!expected.has(schema)) expected.set(schema, await sqliteMirror(schema));
      const lite = expected.get(schema)!;
      const pg = await postgresMirror(schema, types, zone);
      expect(pg.actions).toEqual(lite.actions);
      expect(Object.keys(pg.refs).length).toBeGreaterThan(0);
      expect(pg.refs).toEqual(lite.refs);
      for (const id of Object.keys(pg.refs)) assertHealthy(join(pg.root, id));
    }, 300_000);
  }

  it('the trees keep their branches and HEAD on PostgreSQL (what the SQLite tests assert in full)', async () => {
    const { root } = await postgresMirror('open-webui', {}, undefined);
    const facts = repoFacts(join(root, 'w1'));
    expect(facts.head).toBe('fork-w1-m6');
    expect(Object.keys(facts.branches).sort()).toEqual(['fork-w1-m6', 'main', 'retry-w1-m3']);
    expect(facts.branches['fork-w1-m6']!.commits).toBe(3);
  }, 300_000);
});
