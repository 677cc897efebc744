import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createMirror, type DagSource } from '@entity-git/core';
import { nodeStorage } from '@entity-git/node-fs';
import {
  RENAMED_SHAPE_CONFIG,
  SHAPE_MESSAGES,
  SHAPE_SESSION,
  documentedShapeSql,
  incompatibleShapeSql,
  renamedShapeSql,
  type ShapeEngine,
} from '@entity-git/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgres, openSqlite, parseStoreConfig, type SqlStore } from '../src/index.js';
import { freshDatabase } from './helpers/postgres.js';
import { tempDir } from './helpers/temp.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

function sqliteFile(statements: string[]): string {
  const tmp = tempDir();
  cleanups.push(tmp.remove);
  const file = join(tmp.dir, 'app.db');
  const raw = new Database(file);
  for (const s of statements) raw.exec(s);
  raw.close();
  return file;
}

async function postgresDb(statements: string[]): Promise<{ url: string; tables: () => Promise<string[]> }> {
  const database = await freshDatabase();
  cleanups.push(database.drop);
  const { default: Pg } = await import('pg');
  const client = new Pg.Client({ connectionString: database.url });
  await client.connect();
  for (const s of statements) await client.query(s);
  await client.end();
  const tables = async () => {
    const c = new Pg.Client({ connectionString: database.url });
    await c.connect();
    try {
      const r = await c.query(
        `select table_name || '.' || column_name || ':' || data_type as c from information_schema.columns where table_schema = 'public' order by 1`,
      );
      return r.rows.map((x: { c: string }) => x.c);
    } finally {
      await c.end();
    }
  };
  return { url: database.url, tables };
}

/** Every branch of the session's repository, name → commit ids newest first; and fsck's verdict. */
async function mirrored(dag: DagSource): Promise<Record<string, string[]>> {
  const tmp = tempDir('entity-git-shapes-');
  cleanups.push(tmp.remove);
  const mirror = createMirror({ dag, storage: nodeStorage(), root: tmp.dir });
  await mirror.sync(SHAPE_SESSION.id);
  const out: Record<string, string[]> = {};
  for (const b of await mirror.branches(SHAPE_SESSION.id))
    out[b.name] = (await mirror.log(SHAPE_SESSION.id, { branch: b.name })).map((c) => c.sha);
  execFileSync('git', ['fsck', '--strict'], { cwd: mirror.repoPath(SHAPE_SESSION.id), stdio: 'pipe' });
  return out;
}

/** The same conversation written by entity-git itself into its own new database. */
async function ownStore(open: () => Promise<SqlStore>): Promise<SqlStore> {
  const store = await open();
  cleanups.push(() => store.close());
  await store.writer.createSession({
    id: SHAPE_SESSION.id,
    title: SHAPE_SESSION.title,
    created_at: SHAPE_SESSION.created_at,
  });
  for (const m of SHAPE_MESSAGES) {
    await store.writer.appendNode({
      id: m.id,
      session_id: SHAPE_SESSION.id,
      role: m.role,
      content: m.content,
      predecessor: m.predecessor,
      created_at: m.created_at,
    });
  }
  return store;
}

function ownFile(): string {
  const tmp = tempDir();
  cleanups.push(tmp.remove);
  return join(tmp.dir, 'own.db');
}

const renamed = parseStoreConfig(JSON.parse(JSON.stringify(RENAMED_SHAPE_CONFIG)));

for (const engine of ['sqlite', 'postgres'] as ShapeEngine[]) {
  describe(`three shapes of a database give the same repositories (${engine})`, () => {
    const open = async (statements: string[] | null, options: Record<string, unknown> = {}) => {
      if (engine === 'sqlite') {
        const file = statements === null ? ownFile() : sqliteFile(statements);
        return { store: () => openSqlite({ file, ...options }), unchanged: async () => sha(file), file };
      }
      const { url, tables } = await postgresDb(statements ?? []);
      return { store: () => openPostgres({ connectionString: url, ...options }), unchanged: tables, file: url };
    };

    it('the documented schema made by another program, a renamed one with parent_id and text content, and our own', async () => {
      const own = await ownStore((await open(null)).store);
      const expected = await mirrored(own.dag);
      expect(Object.keys(expected).sort()).toEqual(['main', 'retry-a2r']);
      for (const ids of Object.values(expected)) {
        expect(ids.length).toBeGreaterThanOrEqual(2);
        for (const id of ids) expect(id).toMatch(/^[0-9a-f]{40}$/);
      }

      // Opened as the CLI's read commands open it: nothing is written at all.
      const docRead = await open(documentedShapeSql(engine), { migrate: false, checkSchema: true });
      const docBefore = await docRead.unchanged();
      const s1 = await docRead.store();
      expect(await mirrored(s1.dag)).toEqual(expected);
      await s1.close();
      expect(await docRead.unchanged()).toEqual(docBefore);

      const ren = await open(renamedShapeSql(engine), { ...renamed, migrate: false, checkSchema: true });
      const renBefore = await ren.unchanged();
      const s2 = await ren.store();
      expect(s2.names.nodes).toMatchObject({
        table: 'messages',
        predecessor: 'parent_id',
        caller: null,
        metadata: null,
      });
      expect(s2.names.sessions).toMatchObject({ table: 'conversations', head: null, project_id: null, model: null });
      expect(await mirrored(s2.dag)).toEqual(expected);
      await s2.close();
      expect(await ren.unchanged()).toEqual(renBefore);
    });

    it('a write store adopts the documented tables without re-creating them, and writes text content as text', async () => {
      const documented = await open(documentedShapeSql(engine));
      const store = await documented.store(); // default: migrate
      cleanups.push(() => store.close());
      const rows = await store.db.selectFrom('entity_git_migration').select('name').execute();
      // Both steps recorded; 0002's change marks are not made on tables entity-git did not create.
      expect(rows.map((r) => r.name)).toEqual(['0001_initial', '0002_change_marks']);
      expect((await store.db.introspection.getTables()).map((t) => t.name)).not.toContain('entity_git_session_marks');
      const n = await store.writer.appendNode({
        id: 'u4',
        session_id: SHAPE_SESSION.id,
        role: 'user',
        content: 'More',
        predecessor: 'u3',
      });
      expect(n.seq).toBe(7);
      // Opening again finds the migration recorded and does nothing.
      const again = await documented.store();
      await again.close();

      const ren = await open(renamedShapeSql(engine), { ...renamed });
      const s2 = await ren.store();
      cleanups.push(() => s2.close());
      await s2.writer.appendNode({
        id: 'u4',
        session_id: SHAPE_SESSION.id,
        role: 'user',
        content: 'Plain text, "as is"',
        predecessor: 'u3',
      });
      const row = await s2.db
        .selectFrom('messages')
        .select(['content', 'parent_id'])
        .where('id', '=', 'u4')
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ content: 'Plain text, "as is"', parent_id: 'u3' });
      await expect(
        s2.writer.appendNode({ id: 'u5', session_id: SHAPE_SESSION.id, role: 'user', content: { not: 'text' } }),
      ).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    });

    it('an incompatible database is refused with SCHEMA_MISMATCH naming table and column, and is left unchanged', async () => {
      for (const _options of [{}, { migrate: false }, { names: { nodes: { predecessor: 'parent_id' } } }]) {
        const bad = await open(incompatibleShapeSql(engine));
        const before = await bad.unchanged();
        const err = await bad.store().then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toMatchObject({ code: 'SCHEMA_MISMATCH', data: { table: 'nodes' } });
        expect((err as Error).message).toMatch(/column "(seq|parent_id)" .*nodes/);
        expect(await bad.unchanged()).toEqual(before);
      }
      // A documented database read with the wrong format: a json column (PostgreSQL) or missing column.
      const doc = await open(documentedShapeSql(engine), { names: { nodes: { caller: 'tool_parent' } } });
      const before = await doc.unchanged();
      await expect(doc.store()).rejects.toMatchObject({
        code: 'SCHEMA_MISMATCH',
        data: { table: 'nodes', column: 'tool_parent' },
      });
      expect(await doc.unchanged()).toEqual(before);
    });
  });
}

describe('a PostgreSQL json column', () => {
  it('is read with the format "jsonb" (and refused, unchanged, as the default JSON text)', async () => {
    const own = await ownStore(() => openSqlite({ file: ownFile() }));
    const expected = await mirrored(own.dag);
    const statements = documentedShapeSql('postgres').map((s) => s.replace('content text,', 'content jsonb,'));
    const { url, tables } = await postgresDb(statements);
    const before = await tables();
    expect(before).toContain('nodes.content:jsonb');
    await expect(openPostgres({ connectionString: url })).rejects.toMatchObject({
      code: 'SCHEMA_MISMATCH',
      data: { column: 'content' },
    });
    expect(await tables()).toEqual(before);
    const store = await openPostgres({
      connectionString: url,
      formats: { nodes: { content: 'jsonb' } },
      migrate: false,
    });
    cleanups.push(() => store.close());
    expect(await mirrored(store.dag)).toEqual(expected);
  });
});

describe('the configuration', () => {
  it('is checked at load: unknown keys, tables, columns and formats are INVALID_OPTION naming the key', () => {
    expect(() => parseStoreConfig({ name: {} }, 'x.json')).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTION',
        message: expect.stringContaining('x.json: unknown key "name"'),
      }),
    );
    expect(() => parseStoreConfig({ names: { nodez: {} } })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringContaining('names.nodez') }),
    );
    expect(() => parseStoreConfig({ names: { nodes: { parent: 'x' } } })).toThrow(
      expect.objectContaining({ message: expect.stringContaining('names.nodes.parent') }),
    );
    expect(() => parseStoreConfig({ formats: { nodes: { content: 'xml' } } })).toThrow(
      expect.objectContaining({
        message: expect.stringContaining('formats.nodes.content must be one of "json", "text", "jsonb", got "xml"'),
      }),
    );
    expect(() => parseStoreConfig({ notifyChannel: 'drop table;' })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
    expect(() => parseStoreConfig([])).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(
      parseStoreConfig({
        names: { nodes: { predecessor: 'parent_id' } },
        formats: { nodes: { content: 'text' } },
        notifyChannel: 'dag_changed',
      }),
    ).toEqual({
      names: { nodes: { predecessor: 'parent_id' } },
      formats: { nodes: { content: 'text' } },
      notifyChannel: 'dag_changed',
    });
  });
});
