// The recognised stores' markers queries (mapping.markers): every kind of write each application
// makes moves the session's marker, so the next start-up check re-syncs it, and the mirror ends
// where a fresh backfill of the final rows does; an unchanged store is `unchanged` throughout,
// judged by the marker alone. On SQLite and, where the application runs there, PostgreSQL.
import { join } from 'node:path';
import { reconcile } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type SqlStore, openPostgres, openSqlite } from '../../src/index.js';
import { freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { liveStart, openWebuiSteps, opencodeSteps, webuiMessagesSteps, type Step } from './fixtures/app-writes.js';
import { pgExec } from './fixtures/recognised-postgres.js';
import { AGENTS_ITEMS, OPENCODE_MESSAGES, T0, make } from './fixtures/recognised-stores.js';
import { refsOf } from './repo-facts.js';

const tmp = tempDir('entity-git-recognised-markers-');
const drops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const drop of drops) await drop();
  tmp.remove();
});

const sqlTime = (s: number) => new Date((T0 + s) * 1000).toISOString().replace('T', ' ').slice(0, 19);

/** The SDK's add_items (each item a row, then the session's updated_at) and pop_item (the newest row deleted). */
function agentsSteps(): Step[] {
  let writes = 0;
  const add = (t: number, item: unknown): Step[] => [
    [
      'insert into agent_messages (session_id, message_data, created_at) values ($1, $2, $3)',
      ['conv_1', JSON.stringify(item), sqlTime(t)],
    ],
    // The SDK stamps CURRENT_TIMESTAMP: the time of the write, a second after the one before.
    ['update agent_sessions set updated_at = $1 where session_id = $2', [sqlTime(3600 + ++writes), 'conv_1']],
  ];
  const pop: Step = [
    'delete from agent_messages where id = (select max(id) from agent_messages where session_id = $1)',
    ['conv_1'],
  ];
  const steps = AGENTS_ITEMS.flatMap(([t, item]) => add(t, item));
  const [t, last] = AGENTS_ITEMS.at(-1)!;
  // Popped and added again: the same count, the same content, a new id.
  return [...steps, pop, ...add(t, last), pop];
}

const STORES = {
  'openai-agents': { session: 'conv_1', steps: agentsSteps, engines: ['sqlite', 'postgres'] },
  opencode: { session: 'ses_1', steps: () => opencodeSteps(OPENCODE_MESSAGES), engines: ['sqlite'] },
  'open-webui': { session: 'w1', steps: openWebuiSteps, engines: ['sqlite', 'postgres'] },
  'open-webui-messages': { session: 'w2', steps: webuiMessagesSteps, engines: ['sqlite', 'postgres'] },
} as const;

type Engine = 'sqlite' | 'postgres';

/** A store of `name` as its application starts it, a way to write it, and to open it recognised. */
async function started(name: keyof typeof STORES, engine: Engine) {
  if (engine === 'sqlite') {
    const file = join(tmp.dir, `${name}.sqlite`);
    make(file, liveStart(name, 'sqlite'));
    return {
      write: async ([text, params]: Step) => {
        const app = new Database(file, { timeout: 10_000 });
        app.prepare(text.replace(/\$\d+/g, '?')).run(...(params as unknown[]));
        app.close();
      },
      open: () => openSqlite({ file, quietMs: Number.POSITIVE_INFINITY }),
      openQuiet: () => openSqlite({ file, quietMs: 1000 }),
    };
  }
  const { url, drop } = await freshDatabase();
  drops.push(drop);
  await pgExec(url, ["set time zone 'UTC'", ...liveStart(name, 'postgres')]);
  return {
    write: async ([text, params]: Step) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query("set time zone 'UTC'");
        await client.query(text, params as unknown[]);
      } finally {
        await client.end();
      }
    },
    open: () => openPostgres({ connectionString: url, quietMs: Number.POSITIVE_INFINITY }),
    openQuiet: () => openPostgres({ connectionString: url, quietMs: 1000 }),
  };
}

async function withStore<T>(open: () => Promise<SqlStore>, use: (store: SqlStore) => Promise<T>): Promise<T> {
  const store = await open();
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

describe('the markers queries of the recognised stores', () => {
  for (const [name, { session, steps, engines }] of Object.entries(STORES))
    for (const engine of engines)
      it(`${name} on ${engine}: every write moves the marker, the start-up check re-syncs, a fresh backfill gives the same ids`, async () => {
        const store = await started(name as keyof typeof STORES, engine);
        const root = join(tmp.dir, `${name}-${engine}-live`);
        let marker: string | null = null;
        for (const step of steps()) {
          await store.write(step);
          await withStore(store.open, async (s) => {
            expect(s.recognised).toBe(name);
            const now = await s.dag.changeMarker(session);
            // From the markers query (`m1.`), and moved by this write.
            expect(now, `after ${step[0]}`).toMatch(/^m1\./);
            expect(now, `after ${step[0]}`).not.toBe(marker);
            marker = now;
            const mirror = createNodeMirror({ dag: s.dag, root });
            expect(await mirror.verify(session, { quick: true })).not.toMatchObject({ unchanged: true });
            const report = await reconcile({ dag: s.dag, mirror });
            expect(report.entries.filter((e) => e.action === 'failed')).toEqual([]);
          });
        }
        await withStore(store.open, async (s) => {
          const mirror = createNodeMirror({ dag: s.dag, root });
          const ids = await s.dag.listSessions();
          // Unchanged: every session judged by its marker alone.
          const report = await reconcile({ dag: s.dag, mirror });
          expect(report.entries.map((e) => e.action)).toEqual(ids.map(() => 'unchanged'));
          for (const id of ids) expect(await mirror.verify(id, { quick: true })).toMatchObject({ unchanged: true });
          const fresh = join(tmp.dir, `${name}-${engine}-fresh`);
          await reconcile({ dag: s.dag, mirror: createNodeMirror({ dag: s.dag, root: fresh }) });
          for (const id of ids) expect(refsOf(join(root, id)), id).toEqual(refsOf(join(fresh, id)));
          expect(await s.dag.changeMarker(session)).not.toMatch(/\.q$/);
        });
        // The markers query's `newest`: with a quiet time of a second, rows dated months ago are quiet.
        const quiet = await withStore(store.openQuiet, (s) => s.dag.changeMarker(session));
        expect(quiet).toMatch(/^m1\..*\.q$/);
      });
});
