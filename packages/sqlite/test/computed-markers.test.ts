// The markers computed from the rows of a database without entity-git's triggers, beyond the
// conformance part: nothing written to the database by anything that reads them, one read for
// every session in a start-up check, a write racing a sync, repositories synced before markers
// existed, another reading of the same rows, and a SQLite connection of the caller's.
import { join } from 'node:path';
import { createMirror, reconcile, type DagSource, type Mirror } from '@entity-git/core';
import { nodeStorage } from '@entity-git/node-fs';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_SCHEMA_NAMES,
  createSqlStore,
  openSqlite,
  registerRowsChecksum,
  resolveSchemaNames,
  type MappingInput,
  type SqlEngine,
} from '../src/index.js';
import { tablesHash } from './app-databases/fixtures/table-hash.js';
import { openAppDatabase, type AppDatabase } from './helpers/app-edits.js';
import {
  POSTS_MAPPING,
  flatDagShape,
  messagesShape,
  ownLayoutShape,
  postsShape,
  type AppShape,
} from './helpers/app-shapes.js';
import { OTHER_NAMES } from './helpers/other-names.js';
import { pgSnapshot } from './helpers/pg-snapshot.js';
import { tempDir } from './helpers/temp.js';

const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const T0 = 1_700_000_000;
const OWN = ownLayoutShape("entity-git's layout, default names", DEFAULT_SCHEMA_NAMES, false);
const ENGINES: SqlEngine[] = ['sqlite', 'postgres'];

function mirrorOf(dag: DagSource): Mirror {
  const tmp = tempDir('entity-git-computed-');
  cleanups.push(tmp.remove);
  return createMirror({ dag, storage: nodeStorage(), root: join(tmp.dir, 'sessions') });
}

async function appDatabase(shape: AppShape, engine: SqlEngine): Promise<AppDatabase> {
  const db = await openAppDatabase(shape, engine);
  cleanups.push(db.cleanup);
  return db;
}

/** Two turns in `id`, the head on the last reply. */
async function twoTurns(db: AppDatabase, id: string): Promise<void> {
  const { edits } = db;
  await edits.createSession(id, `Session ${id}`);
  const nodes = [
    ['u1', 'user', 'hello'],
    ['a1', 'assistant', 'hi there'],
    ['u2', 'user', 'and then?'],
    ['a2', 'assistant', 'then this'],
  ] as const;
  for (const [i, [n, role, content]] of nodes.entries())
    await edits.append({
      id: `${id}-${n}`,
      session_id: id,
      role,
      content,
      predecessor: i === 0 ? null : `${id}-${nodes[i - 1]![0]}`,
      created_at: T0 + i + 1,
    });
  await edits.setHead(id, `${id}-a2`);
}

/** What the database holds: every table's rows and its schema (SQLite's master, PostgreSQL's catalogue). */
const contentsOf = (db: AppDatabase) => (db.file !== null ? Promise.resolve(tablesHash(db.file)) : pgSnapshot(db.url!));

/** A source that counts the marker reads it passes on to `dag`. */
function counting(dag: DagSource): { source: DagSource; calls: { one: number; many: number } } {
  const calls = { one: 0, many: 0 };
  const source: DagSource = {
    listSessions: () => dag.listSessions(),
    getSession: (id) => dag.getSession(id),
    nodesAfter: (id, after, o) => dag.nodesAfter(id, after, o),
    changeMarker: (id) => (calls.one++, dag.changeMarker!(id)),
    changeMarkers: (ids) => (calls.many++, dag.changeMarkers!(ids)),
  };
  return { source, calls };
}

const SHAPES: AppShape[] = [
  OWN,
  ownLayoutShape("entity-git's layout, other names", resolveSchemaNames(OTHER_NAMES), true),
  postsShape,
  messagesShape,
  flatDagShape,
];

describe('nothing is written to the database', () => {
  for (const engine of ENGINES) {
    for (const shape of SHAPES) {
      it(`${engine}, ${shape.label}: a backfill, the quick and the full check leave every row and the schema as they were`, async () => {
        const db = await appDatabase(shape, engine);
        await twoTurns(db, 'c1');
        await twoTurns(db, 'c2');
        const before = await contentsOf(db);
        const { source, calls } = counting(db.store.dag);
        const mirror = mirrorOf(source);
        const backfill = await reconcile({ dag: source, mirror });
        expect(backfill.entries.map((e) => e.action)).toEqual(['backfilled', 'backfilled']);
        calls.one = 0;
        calls.many = 0;
        // The start-up check: one read of every marker, none asked session by session.
        const check = await reconcile({ dag: source, mirror });
        expect(check.entries.map((e) => e.action)).toEqual(['unchanged', 'unchanged']);
        expect(calls).toEqual({ one: 0, many: 1 });
        for (const id of ['c1', 'c2']) {
          expect(await mirror.verify(id, { quick: true })).toMatchObject({ ok: true, unchanged: true });
          expect(await mirror.verify(id)).toEqual({ sessionId: id, ok: true, differences: [] });
        }
        await reconcile({ dag: source, mirror, full: true });
        expect(await contentsOf(db)).toBe(before);
      });
    }
  }
});

describe('changeMarkers over many sessions', () => {
  for (const engine of ENGINES) {
    it(`${engine}: every session, more ids than one query takes, and a few chunks of them give the single values`, async () => {
      const db = await appDatabase(OWN, engine);
      const ids = Array.from({ length: 2100 }, (_, i) => `m${String(i).padStart(4, '0')}`);
      await db.app.transaction().execute(async (trx) => {
        for (let i = 0; i < ids.length; i += 300) {
          const some = ids.slice(i, i + 300);
          await trx
            .insertInto('sessions')
            .values(some.map((id) => ({ id, title: id, created_at: T0 })))
            .execute();
          await trx
            .insertInto('nodes')
            .values(
              some.map((id) => ({
                id: `${id}-n`,
                session_id: id,
                seq: 1,
                role: 'user',
                content: JSON.stringify(`text of ${id}`),
                created_at: T0,
              })),
            )
            .execute();
        }
      });
      const dag = db.store.dag;
      const all = await dag.changeMarkers();
      expect(all.size).toBe(ids.length);
      expect(new Set(all.values()).size).toBe(ids.length);
      expect(await dag.changeMarkers(ids)).toEqual(all);
      const some = ids.slice(100, 800);
      expect(await dag.changeMarkers(some)).toEqual(new Map(some.map((id) => [id, all.get(id)!])));
      for (const id of ids.filter((_, i) => i % 150 === 0)) expect(await dag.changeMarker(id)).toBe(all.get(id));
      // An id no SQL text holds is not sent to the database; an unknown one has none.
      expect(await dag.changeMarkers(['m0001', 'a\u0000b', 'unknown'])).toEqual(
        new Map([
          ['m0001', all.get('m0001')!],
          ['a\u0000b', null],
          ['unknown', null],
        ]),
      );
    });
  }
});

describe('the mirror and computed markers', () => {
  it('a write during a sync that is undone after it leaves no marker recorded: the next check is the full one', async () => {
    const db = await appDatabase(OWN, 'sqlite');
    await twoTurns(db, 'r1');
    // A regenerated reply: a second branch, HEAD still on main.
    await db.edits.append({
      id: 'r1-a2b',
      session_id: 'r1',
      role: 'assistant',
      content: 'then that',
      predecessor: 'r1-u2',
      created_at: T0 + 9,
    });
    let during: (() => Promise<unknown>) | null = null;
    const dag = db.store.dag;
    const racing: DagSource = {
      listSessions: () => dag.listSessions(),
      // The sync reads the marker, then the row: the head moves in between, so it mirrors that head.
      getSession: async (id) => {
        const write = during;
        during = null;
        await write?.();
        return dag.getSession(id);
      },
      nodesAfter: (id, after, o) => dag.nodesAfter(id, after, o),
      changeMarker: (id) => dag.changeMarker(id),
    };
    const mirror = mirrorOf(racing);
    during = () => db.edits.setHead('r1', 'r1-a2b');
    await mirror.sync('r1');
    expect((await mirror.branches('r1')).find((b) => b.head)?.name).toBe('retry-r1-a2b');
    // Undone: the rows are again what the sync's first marker read saw.
    await db.edits.setHead('r1', 'r1-a2');
    const full = await mirror.verify('r1');
    expect(full.differences.map((d) => d.kind)).toEqual(['head-differs']);
    expect(await mirror.verify('r1', { quick: true })).toEqual(full);
    await mirror.sync('r1');
    expect(await mirror.verify('r1', { quick: true })).toMatchObject({ ok: true, unchanged: true });
  });

  it('a repository synced before its source had markers gets its marker recorded by the first start-up check', async () => {
    const db = await appDatabase(messagesShape, 'sqlite');
    await twoTurns(db, 'o1');
    const dag = db.store.dag;
    const unmarked: DagSource = {
      listSessions: () => dag.listSessions(),
      getSession: (id) => dag.getSession(id),
      nodesAfter: (id, after, o) => dag.nodesAfter(id, after, o),
    };
    const tmp = tempDir('entity-git-computed-old-');
    cleanups.push(tmp.remove);
    const root = join(tmp.dir, 'sessions');
    await createMirror({ dag: unmarked, storage: nodeStorage(), root }).sync('o1');
    const mirror = createMirror({ dag, storage: nodeStorage(), root });
    expect((await mirror.verify('o1', { quick: true })).unchanged).toBeUndefined();
    const hash = tablesHash(db.file!);
    expect((await reconcile({ dag, mirror })).entries.map((e) => e.action)).toEqual(['unchanged']);
    expect(await mirror.verify('o1', { quick: true })).toMatchObject({ ok: true, unchanged: true });
    expect(tablesHash(db.file!)).toBe(hash);
  });

  it('the same rows read through another mapping are never "unchanged": the marker names how they are read', async () => {
    const db = await appDatabase(postsShape, 'sqlite');
    await twoTurns(db, 'p1');
    const root = tempRoot();
    const mirror = createMirror({ dag: db.store.dag, storage: nodeStorage(), root });
    await mirror.sync('p1');
    expect(await mirror.verify('p1', { quick: true })).toMatchObject({ ok: true, unchanged: true });
    // Roles the other way round: the same columns, other nodes.
    const swapped = { from: 'author', values: { human: 'assistant', bot: 'user' } } as const;
    const other = await openSqlite({
      file: db.file!,
      mapping: { ...POSTS_MAPPING, nodes: { ...POSTS_MAPPING.nodes, role: swapped } } as MappingInput,
    });
    cleanups.push(() => other.close());
    expect(await other.dag.changeMarker('p1')).not.toBe(await db.store.dag.changeMarker('p1'));
    const otherMirror = createMirror({ dag: other.dag, storage: nodeStorage(), root });
    const full = await otherMirror.verify('p1');
    expect(full.ok).toBe(false);
    expect(await otherMirror.verify('p1', { quick: true })).toEqual(full);
  });
});

describe('a read-only SQLite connection keeps its computed markers until another connection commits', () => {
  it('reading a marker again costs no pass over the rows; a commit by the application is seen at once', async () => {
    const db = await appDatabase(OWN, 'sqlite');
    await twoTurns(db, 'v1');
    await twoTurns(db, 'v2');
    let passes = 0;
    const store = await openSqlite({
      file: db.file!,
      readonly: true,
      log: (e) => {
        if (e.level === 'query' && e.query.sql.includes('entity_git_rows_checksum')) passes++;
      },
    });
    cleanups.push(() => store.close());
    const first = await store.dag.changeMarker('v1');
    expect(passes).toBe(2); // the sessions table, then the nodes
    expect(await store.dag.changeMarker('v1')).toBe(first);
    expect(passes).toBe(2);
    // The batch's values are kept too.
    const all = await store.dag.changeMarkers();
    expect(passes).toBe(4);
    expect(await store.dag.changeMarker('v2')).toBe(all.get('v2'));
    expect(passes).toBe(4);
    await db.edits.setContent('v1', 'v1-a2', 'then THIS');
    const after = await store.dag.changeMarker('v1');
    expect(after).not.toBe(first);
    expect(passes).toBe(6);
    expect(await store.dag.changeMarker('v2')).toBe(all.get('v2'));
    expect(passes).toBe(8);
    // A connection that may write itself is never served a kept marker.
    const writable = await openSqlite({
      file: db.file!,
      migrate: false,
      log: (e) => {
        if (e.level === 'query' && e.query.sql.includes('entity_git_rows_checksum')) passes++;
      },
    });
    cleanups.push(() => writable.close());
    expect(await writable.dag.changeMarker('v1')).toBe(after);
    expect(await writable.dag.changeMarker('v1')).toBe(after);
    expect(passes).toBe(12);
  });
});

describe("a SQLite connection of the caller's (createSqlStore)", () => {
  it('has no computed marker until registerRowsChecksum puts the function on it; then the same as openSqlite', async () => {
    const db = await appDatabase(OWN, 'sqlite');
    await twoTurns(db, 'k1');
    const expected = await db.store.dag.changeMarker('k1');
    expect(expected).not.toBeNull();
    const hash = tablesHash(db.file!);

    const plain = new Database(db.file!, { readonly: true });
    const bare = await createSqlStore({
      db: new Kysely<any>({ dialect: new SqliteDialect({ database: plain }) }),
      migrate: false,
    });
    expect(await bare.dag.changeMarker('k1')).toBeNull();
    expect(await bare.dag.changeMarkers()).toEqual(new Map());
    expect(await bare.dag.changeMarkers(['k1'])).toEqual(new Map([['k1', null]]));
    await bare.db.destroy();

    const registered = new Database(db.file!, { readonly: true });
    registerRowsChecksum(registered);
    const own = await createSqlStore({
      db: new Kysely<any>({ dialect: new SqliteDialect({ database: registered }) }),
      migrate: false,
    });
    expect(await own.dag.changeMarker('k1')).toBe(expected);
    expect(await own.dag.changeMarkers()).toEqual(new Map([['k1', expected]]));
    await own.db.destroy();
    expect(tablesHash(db.file!)).toBe(hash);
  });

  it("is a function of the connection that the database's own views and triggers cannot use", () => {
    const memory = new Database(':memory:');
    registerRowsChecksum(memory);
    memory.exec('create table t (k text, v text); insert into t values (1, 2)');
    expect(memory.prepare('select entity_git_rows_checksum(k, v) as h from t').get()).toEqual({
      h: expect.stringMatching(/^[0-9a-f]+$/),
    });
    memory.exec('create view v as select entity_git_rows_checksum(k, v) as h from t');
    expect(() => memory.prepare('select * from v').all()).toThrow(/unsafe use of entity_git_rows_checksum/);
    memory.close();
  });
});

function tempRoot(): string {
  const tmp = tempDir('entity-git-computed-root-');
  cleanups.push(tmp.remove);
  return join(tmp.dir, 'sessions');
}
