// The change marker a start-up check trusts. Every kind of write — append, fill, head switch, a
// row edited or deleted by hand in SQL — changes it, and the quick verify then does the full check
// (same report as `verify` without `quick`), so it never skips a changed session: the revisions
// triggers keep in a database entity-git created, and the markers computed from the rows of one
// the application made.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { createMirror, MemoryDag, reconcile, type DagSource, type DagWriter, type Mirror } from '@entity-git/core';
import { nodeStorage } from '@entity-git/node-fs';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { DEFAULT_SCHEMA_NAMES, openPostgres, openSqlite, type SqlStore } from '../src/index.js';
import { ownLayoutShape } from './helpers/app-shapes.js';
import { freshDatabase } from './helpers/postgres.js';
import { reusablePostgres } from './helpers/reusable-postgres.js';
import { tempDir } from './helpers/temp.js';

const cleanups: Array<() => unknown> = [];
const pg = reusablePostgres();
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await pg.close();
});

const SID = 'marked';
const OWN_LAYOUT = ownLayoutShape('', DEFAULT_SCHEMA_NAMES, false);
const T0 = 1779500000;

function mirrorOf(dag: DagSource): Mirror {
  const tmp = tempDir('entity-git-marker-');
  cleanups.push(tmp.remove);
  return createMirror({ dag, storage: nodeStorage(), root: join(tmp.dir, 'sessions') });
}

async function sqliteStore(): Promise<SqlStore> {
  const tmp = tempDir('entity-git-marker-db-');
  const store = await openSqlite({ file: join(tmp.dir, 'dag.db') });
  cleanups.push(tmp.remove, () => store.close());
  return store;
}

/** Two turns, then a third user message with a pending reply (a placeholder to fill). */
async function writeSession(writer: DagWriter): Promise<void> {
  await writer.createSession({ id: SID, title: 'Marked', created_at: T0 });
  let prev: string | null = null;
  for (let i = 1; i <= 6; i++) {
    const role = i % 2 === 1 ? 'user' : 'assistant';
    const metadata = i === 6 ? { pending: true } : null;
    const node = await writer.appendNode({
      id: `m${i}`,
      session_id: SID,
      role,
      content: `message ${i}`,
      predecessor: prev,
      created_at: T0 + i,
      metadata,
    });
    prev = node.id;
  }
}

interface Backend {
  dag: DagSource & DagWriter;
  /** Run SQL typed by hand (absent: a MemoryDag, whose rows only its methods change). */
  exec?: (text: string) => Promise<void>;
}

/** The quick verify did the full check: it reports what the full verify reports, and no `unchanged`. */
async function expectChecked(mirror: Mirror): Promise<void> {
  const quick = await mirror.verify(SID, { quick: true });
  expect(quick.unchanged).toBeUndefined();
  expect(quick).toEqual(await mirror.verify(SID));
}

async function expectSkipped(mirror: Mirror): Promise<void> {
  expect(await mirror.verify(SID, { quick: true })).toEqual({
    sessionId: SID,
    ok: true,
    differences: [],
    unchanged: true,
  });
}

function scenario(name: string, open: () => Promise<Backend>): void {
  describe(name, () => {
    it('every kind of write changes the marker, and the quick verify then checks in full', async () => {
      const { dag, exec } = await open();
      await writeSession(dag);
      const mirror = mirrorOf(dag);
      // Before any sync: nothing recorded, so the full check (which finds no repository).
      expect(await mirror.verify(SID, { quick: true })).toMatchObject({
        ok: false,
        differences: [{ kind: 'missing-repo' }],
      });
      await mirror.sync(SID);
      await expectSkipped(mirror);
      // A mirror that did not run the sync reads what the last sync recorded from the repository.
      expect(await mirrorOf(dag).verify(SID, { quick: true })).toMatchObject({
        ok: false,
        differences: [{ kind: 'missing-repo' }],
      });

      const markers = new Set<string>([(await dag.changeMarker!(SID))!]);
      const writes: [string, () => Promise<unknown>, boolean][] = [
        ['fill', () => dag.fillNode(SID, 'm6', 'message 6, filled', { pending: false }), true],
        [
          'append',
          async () => {
            await dag.appendNode({
              id: 'm7',
              session_id: SID,
              role: 'user',
              content: 'message 7',
              predecessor: 'm6',
              created_at: T0 + 7,
            });
            await dag.appendNode({
              id: 'm8',
              session_id: SID,
              role: 'assistant',
              content: 'message 8',
              predecessor: 'm7',
              created_at: T0 + 8,
            });
          },
          true,
        ],
        ['head switch', () => dag.setHead(SID, 'm4'), true],
      ];
      if (exec) {
        writes.push(
          ['row edit by hand', () => exec(`update nodes set content = '"edited by hand"' where id = 'm2'`), false],
          [
            'session row edit by hand',
            () => exec(`update sessions set title = 'Renamed by hand' where id = '${SID}'`),
            true,
          ],
          ['row deleted by hand', () => exec(`delete from nodes where id = 'm8'`), false],
        );
      }
      for (const [kind, write, stillEqual] of writes) {
        await write();
        const marker = await dag.changeMarker!(SID);
        expect(marker, kind).not.toBeNull();
        expect(markers.has(marker!), `${kind}: a marker seen before`).toBe(false);
        markers.add(marker!);
        await expectChecked(mirror);
        // An edit or deletion by hand leaves commits the DAG no longer derives: the full check says so.
        if (!stillEqual) expect((await mirror.verify(SID, { quick: true })).ok, kind).toBe(false);
        await mirror.sync(SID, { full: !stillEqual });
        expect((await mirror.verify(SID)).ok, kind).toBe(true);
        await expectSkipped(mirror);
      }
    });

    it('a ref moved since the last sync is checked in full, and reconcile repairs it; a source without markers is always checked', async () => {
      const { dag } = await open();
      await writeSession(dag);
      const mirror = mirrorOf(dag);
      await mirror.sync(SID);
      const dir = mirror.repoPath(SID);
      const tip = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
      execFileSync('git', ['update-ref', 'refs/heads/main', `${tip}~1`], { cwd: dir });
      await expectChecked(mirror);
      expect((await mirror.verify(SID, { quick: true })).ok).toBe(false);
      const report = await reconcile({ dag, mirror });
      expect(report.entries.find((e) => e.sessionId === SID)).toMatchObject({ action: 'repaired' });
      expect(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim()).toBe(tip);
      expect((await reconcile({ dag, mirror })).entries.find((e) => e.sessionId === SID)).toMatchObject({
        action: 'unchanged',
      });
      await expectSkipped(mirror);

      // The same DAG through a source that keeps no marker: the full check every time.
      const plain: DagSource = {
        listSessions: () => dag.listSessions(),
        getSession: (id) => dag.getSession(id),
        nodesAfter: (id, after, o) => dag.nodesAfter(id, after, o),
        getHead: (id) => dag.getHead!(id),
      };
      const unmarked = createMirror({ dag: plain, storage: nodeStorage(), root: join(dir, '..') });
      await unmarked.sync(SID);
      await expectChecked(unmarked);
    });
  });
}

scenario('MemoryDag', async () => ({ dag: new MemoryDag() }));

/** The store's reader and writer as one object, and its SQL for edits by hand. */
function backendOf(store: SqlStore): Backend {
  const { dag, writer } = store;
  const both: DagSource & DagWriter = {
    listSessions: () => dag.listSessions(),
    getSession: (id) => dag.getSession(id),
    getHead: (id) => dag.getHead(id),
    nodesAfter: (id, after, o) => dag.nodesAfter(id, after, o),
    changeMarker: (id) => dag.changeMarker!(id),
    createSession: (s) => writer.createSession(s),
    appendNode: (n) => writer.appendNode(n),
    fillNode: (id, node, content, metadata) => writer.fillNode(id, node, content, metadata),
    setHead: (id, node) => writer.setHead(id, node),
  };
  return { dag: both, exec: async (text) => void (await sql.raw(text).execute(store.db)) };
}

scenario('SQLite (marker kept by triggers)', async () => backendOf(await sqliteStore()));
scenario('PostgreSQL (marker kept by triggers)', async () => backendOf(await pg.empty()));

scenario('SQLite, adopted (no triggers: markers computed from the rows)', async () => backendOf(await adoptedSqlite()));
scenario('PostgreSQL, adopted (no triggers: markers computed from the rows)', async () => {
  const database = await freshDatabase();
  const store = await openPostgres({ connectionString: database.url, migrate: false });
  cleanups.push(database.drop, () => store.close());
  for (const statement of OWN_LAYOUT.ddl('postgres') as string[]) await sql.raw(statement).execute(store.db);
  return backendOf(store);
});

/** entity-git's tables made by the application's own SQL: no trigger, no markers table. */
async function adoptedSqlite(): Promise<SqlStore> {
  const tmp = tempDir('entity-git-marker-adopted-');
  const file = join(tmp.dir, 'app.db');
  const app = new Database(file);
  app.exec(OWN_LAYOUT.ddl('sqlite') as string);
  app.close();
  const store = await openSqlite({ file, migrate: false });
  cleanups.push(tmp.remove, () => store.close());
  return store;
}

describe('a database without the markers table (made by another program, or before migration 0002)', () => {
  it('has its markers computed from the rows, so the quick check still sees a write by hand', async () => {
    const store = await sqliteStore();
    await writeSession(store.writer);
    const revision = await store.dag.changeMarker!(SID);
    // As a database of a version before the markers: no table, no trigger.
    const triggers = await sql<{ name: string }>`select name from sqlite_master where type = 'trigger'`.execute(
      store.db,
    );
    for (const { name } of triggers.rows) await sql`drop trigger ${sql.id(name)}`.execute(store.db);
    await sql.raw('drop table entity_git_session_marks').execute(store.db);
    const computed = await store.dag.changeMarker!(SID);
    expect(computed).not.toBeNull();
    expect(computed).not.toBe(revision);
    // The same rows in a database the application made give the same marker.
    const adopted = await adoptedSqlite();
    await writeSession(adopted.writer);
    expect(await adopted.dag.changeMarker!(SID)).toBe(computed);
    const mirror = mirrorOf(store.dag);
    await mirror.sync(SID);
    await expectSkipped(mirror);
    await sql.raw(`update nodes set content = '"message X"' where id = 'm1'`).execute(store.db);
    await expectChecked(mirror);
    expect((await mirror.verify(SID, { quick: true })).ok).toBe(false);
  });

  it('a session without a row (none seeded, none written since) in a database with the table has no marker', async () => {
    const store = await sqliteStore();
    await writeSession(store.writer);
    await sql.raw(`delete from entity_git_session_marks where session_id = '${SID}'`).execute(store.db);
    expect(await store.dag.changeMarker!(SID)).toBeNull();
    expect(await store.dag.changeMarker!('no such session')).toBeNull();
  });
});
