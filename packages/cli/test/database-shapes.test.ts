import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { openSqlite } from '@entity-git/sqlite';
import {
  RENAMED_SHAPE_CONFIG,
  SHAPE_MESSAGES,
  SHAPE_SESSION,
  documentedShapeSql,
  incompatibleShapeSql,
  renamedShapeSql,
} from '@entity-git/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresUrl } from '../../sqlite/test/helpers/postgres.js';
import { REPO_ROOT, revParseAll, run, tempDir } from './fixture.js';

// pg is the sqlite package's (optional) driver, not the CLI's own dependency.
const Pg = createRequire(join(REPO_ROOT, 'packages', 'sqlite', 'package.json'))('pg') as typeof import('pg');

const dir = tempDir('entity-git-shapes-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
let n = 0;

/** A SQLite file made by another program: Python's sqlite3 module runs the statements. */
function pythonSqlite(statements: string[]): string {
  const file = join(dir, `app-${++n}.db`);
  execFileSync(
    'python3',
    [
      '-c',
      'import sqlite3, sys, json\nc = sqlite3.connect(sys.argv[1])\nfor s in json.load(sys.stdin): c.execute(s)\nc.commit()',
      file,
    ],
    { input: JSON.stringify(statements) },
  );
  return file;
}

/** The branches entity-git's own database of the same conversation mirrors to. */
async function expectedBranches(): Promise<Record<string, string>> {
  const file = join(dir, `own-${++n}.db`);
  const store = await openSqlite({ file });
  await store.writer.createSession({
    id: SHAPE_SESSION.id,
    title: SHAPE_SESSION.title,
    created_at: SHAPE_SESSION.created_at,
  });
  for (const m of SHAPE_MESSAGES)
    await store.writer.appendNode({
      id: m.id,
      session_id: SHAPE_SESSION.id,
      role: m.role,
      content: m.content,
      predecessor: m.predecessor,
      created_at: m.created_at,
    });
  await store.close();
  const root = join(dir, `own-root-${n}`);
  expect((await run(['--db', file, '--root', root, 'sync'])).code).toBe(0);
  return revParseAll(join(root, SHAPE_SESSION.id));
}

async function readCommands(db: string, extra: string[]): Promise<Record<string, string>> {
  const root = join(dir, `root-${++n}`);
  const synced = await run(['--db', db, ...extra, '--root', root, 'sync', '--json']);
  expect(synced.stderr).toBe('');
  expect(JSON.parse(synced.stdout)).toMatchObject({ ok: true, counts: { backfilled: 1 } });
  for (const args of [
    ['verify'],
    ['log', SHAPE_SESSION.id],
    ['branches', SHAPE_SESSION.id],
    ['show', SHAPE_SESSION.id, '1'],
  ]) {
    const r = await run(['--db', db, ...extra, '--root', root, ...args]);
    expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' });
  }
  return revParseAll(join(root, SHAPE_SESSION.id));
}

describe('the CLI on databases it did not create (SQLite, made by Python)', () => {
  it('documented and renamed shapes: same ids as our own database, and the files are byte-identical after every read command', async () => {
    const expected = await expectedBranches();
    const documented = pythonSqlite(documentedShapeSql('sqlite'));
    const before = sha(documented);
    expect(await readCommands(documented, [])).toEqual(expected);
    expect(sha(documented)).toBe(before);

    // The renamed shape, its config at the default location beside the database.
    const renamed = pythonSqlite(renamedShapeSql('sqlite'));
    writeFileSync(`${renamed}.entity-git.json`, JSON.stringify(RENAMED_SHAPE_CONFIG));
    const renamedBefore = sha(renamed);
    expect(await readCommands(renamed, [])).toEqual(expected);
    expect(sha(renamed)).toBe(renamedBefore);
    // …and given with --config.
    const elsewhere = join(dir, 'names.json');
    writeFileSync(elsewhere, JSON.stringify(RENAMED_SHAPE_CONFIG));
    const copy = pythonSqlite(renamedShapeSql('sqlite'));
    expect(await readCommands(copy, ['--config', elsewhere])).toEqual(expected);
    // Without the config, the renamed database is refused, unchanged.
    const refused = await run(['--db', copy, '--root', join(dir, 'x'), 'sync']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(
      /^entity-git: table "sessions" \(the contract's sessions\) does not exist; nothing was changed; describe the tables with "names" \(other names\) or "mapping" \(other shapes\) in the config \(SCHEMA_MISMATCH\)\n$/,
    );
  }, 300_000);

  it('an incompatible database and a bad config are refused with the table, column or key named, and nothing written', async () => {
    const bad = pythonSqlite(incompatibleShapeSql('sqlite'));
    const before = sha(bad);
    for (const args of [['sync'], ['projects', 'create', 'p', dir]]) {
      const r = await run(['--db', bad, '--root', join(dir, 'y'), ...args]);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(
        /column "seq" of table "nodes" \(the contract's nodes\.seq\) is "TEXT", expected a number column.*\(SCHEMA_MISMATCH\)\n$/,
      );
      expect(sha(bad)).toBe(before);
    }
    const config = join(dir, 'bad.json');
    writeFileSync(config, JSON.stringify({ names: { nodes: { parent: 'parent_id' } } }));
    const r = await run(['--db', bad, '--config', config, 'sync']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('names.nodes.parent: unknown column');
    expect(sha(bad)).toBe(before);
  }, 300_000);

  it('projects create adopts the documented tables: it records the migration state and creates nothing else', async () => {
    const documented = pythonSqlite(documentedShapeSql('sqlite'));
    const r = await run(['--db', documented, 'projects', 'create', 'trip', dir, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const tables = execFileSync(
      'python3',
      [
        '-c',
        'import sqlite3,sys\nprint(",".join(r[0] for r in sqlite3.connect(sys.argv[1]).execute("select name from sqlite_master where type=\'table\' order by name")))',
        documented,
      ],
      { encoding: 'utf8' },
    ).trim();
    expect(tables).toBe('entity_git_migration,entity_git_migration_lock,nodes,projects,sessions');
  }, 300_000);
});

describe('the CLI on a PostgreSQL database it did not create', () => {
  it('the renamed shape with --config, and the documented one: same ids, no table added', async () => {
    // ENTITY_GIT_PG_URL, or the cluster scripts/start-postgres.sh starts (as the sqlite package's suites do).
    const base = postgresUrl();
    const expected = await expectedBranches();
    for (const statements of [documentedShapeSql('postgres'), renamedShapeSql('postgres')]) {
      const name = `eg_cli_shapes_${process.pid}_${++n}`;
      const query = async (url: string, text: string) => {
        const c = new Pg.Client({ connectionString: url });
        await c.connect();
        try {
          return (await c.query(text)).rows as Record<string, unknown>[];
        } finally {
          await c.end();
        }
      };
      await query(base, `create database "${name}"`);
      const url = new URL(base);
      url.pathname = `/${name}`;
      try {
        for (const s of statements) await query(url.toString(), s);
        const tables = async () =>
          (
            await query(
              url.toString(),
              `select table_name as t from information_schema.tables where table_schema = 'public' order by 1`,
            )
          ).map((r) => r.t);
        const before = await tables();
        const config = join(dir, `pg-${n}.json`);
        writeFileSync(config, JSON.stringify(statements[0]!.includes('conversations') ? RENAMED_SHAPE_CONFIG : {}));
        expect(await readCommands(url.toString(), ['--config', config])).toEqual(expected);
        expect(await tables()).toEqual(before);
      } finally {
        await query(base, `drop database if exists "${name}" with (force)`);
      }
    }
  }, 300_000);
});
