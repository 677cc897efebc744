// The CLI on the databases agent applications already have, with no configuration: the two
// known schemas recognised, mirrored, never written; an unknown one refused with what is near.
// The fixtures are the SQL package's (its tests build them with their own SQL).
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { FlatDagApp, flatDagScenario } from '../../sqlite/test/app-databases/fixtures/flat-dag-db.js';
import { MESSAGES_DDL, MessagesApp, messagesScenario } from '../../sqlite/test/app-databases/fixtures/messages-db.js';
import { tablesHash } from '../../sqlite/test/app-databases/fixtures/table-hash.js';
import { COMMAND, REPO_ROOT, git, json, revParseAll, run, tempDir } from './fixture.js';
import { start, until as waitUntil } from './processes.js';
import { builtChild } from '@entity-git/test-utils/node-child';

const dir = tempDir('entity-git-cli-app-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CHILD = join(REPO_ROOT, 'packages', 'sqlite', 'test', 'app-databases', 'fixtures', 'dispatcher-child.ts');

function messagesDb(name: string): string {
  const file = join(dir, name);
  const app = new MessagesApp(file, { create: true });
  messagesScenario(app);
  app.close();
  return file;
}

function flatDagDb(name: string): string {
  const file = join(dir, name);
  const app = new FlatDagApp(file, { create: true });
  flatDagScenario(app);
  app.close();
  return file;
}

describe('entity-git on an application database, with no configuration', () => {
  for (const [schema, make, session, head, description] of [
    [
      'messages',
      messagesDb,
      's1',
      'fork-u2e',
      'sessions + messages (parent_id, role, plain-text content, timestamp; tool calls in extra)',
    ],
    [
      'flat-dag',
      flatDagDb,
      'f1',
      'fork-n11',
      'sessions + nodes (type user|llm|code, predecessor, caller, 0-based seq, data_json)',
    ],
  ] as const) {
    it(`recognises the ${schema} schema, says so, mirrors it, and no command changes a row of it`, async () => {
      const db = make(`${schema}.sqlite`);
      const root = join(dir, `${schema}-root`);
      const hash = tablesHash(db);
      const eg = (...args: string[]) => run(['--db', db, '--root', root, ...args]);
      const synced = await eg('sync');
      expect(synced.code).toBe(0);
      expect(synced.stderr).toBe(
        `entity-git: recognised the "${schema}" schema: ${description}; read as it is, never written\n`,
      );
      expect(synced.stdout).toMatch(/synced 2 sessions: 2 backfilled, 0 failed\n$/);
      expect(revParseAll(join(root, session)).HEAD).toBe(head);
      expect(tablesHash(db)).toBe(hash);
      for (const args of [['verify'], ['log', session], ['show', session, '1'], ['branches', session], ['sync']]) {
        const r = await eg(...args);
        expect({ args, code: r.code }).toEqual({ args, code: 0 });
        expect(tablesHash(db)).toBe(hash);
      }
      const asJson = json(await eg('sync', '--json'));
      expect([asJson.recognised, asJson.counts.unchanged]).toEqual([schema, 2]);
      expect(json(await eg('log', session, '--json')).recognised).toBe(schema);
      git(join(root, session), 'fsck', '--strict');
      expect(tablesHash(db)).toBe(hash);
    });
  }

  for (const [schema, make, session, edit] of [
    ['messages', messagesDb, 's1', `update messages set content = replace(content, 'hello', 'howdy') where id = 'a1'`],
    [
      'flat-dag',
      flatDagDb,
      'f1',
      `update nodes set data_json = replace(data_json, 'Two files', 'Two FILES') where id = 'n3'`,
    ],
  ] as const) {
    it(`checks a ${schema} database at start-up by its computed markers: a row the application edits is seen, nothing is written`, async () => {
      const db = make(`${schema}-markers.sqlite`);
      const root = join(dir, `${schema}-markers-root`);
      const eg = (...args: string[]) => run(['--db', db, '--root', root, ...args]);
      expect((await eg('sync')).code).toBe(0);
      // The check is the quick one: it reads no object, so a pack removed under intact refs passes
      // it; --full reads them and finds the damage.
      const pack = join(root, session, '.git', 'objects', 'pack');
      for (const f of readdirSync(pack)) rmSync(join(pack, f));
      expect((await eg('verify')).code).toBe(0);
      expect((await eg('verify', '--full')).code).toBe(1);
      expect((await eg('sync', '--full')).code).toBe(0);
      expect((await eg('verify', '--full')).code).toBe(0);
      // An edit of the same length to a committed row, as the application would save it.
      const app = new Database(db);
      app.prepare(edit).run();
      app.close();
      const hash = tablesHash(db);
      const found = await eg('verify');
      expect(found.code).toBe(1);
      expect(found.stdout).toContain(`DIFFERS ${session}`);
      expect(tablesHash(db)).toBe(hash);
      expect(json(await eg('sync', '--json')).counts).toMatchObject({ repaired: 1, unchanged: 1, failed: 0 });
      expect((await eg('verify')).code).toBe(0);
      git(join(root, session), 'fsck', '--strict');
      expect(tablesHash(db)).toBe(hash);
    });
  }

  it('refuses an unknown schema with exit 3, naming the closest known schema, and writes nothing', async () => {
    const db = join(dir, 'variant.sqlite');
    const app = new MessagesApp(db);
    app.db.exec(MESSAGES_DDL.replace('role text, content text,', 'kind text, content text,'));
    app.close();
    const hash = tablesHash(db);
    const r = await run(['--db', db, '--root', join(dir, 'variant-root'), 'sync']);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(
      'entity-git: table "nodes" (the contract\'s nodes) does not exist; nothing was changed; the closest known schema is "messages" (10 of its 11 columns; missing messages.role); a variant of it is read with a "mapping" in the config (SCHEMA_MISMATCH)\n',
    );
    expect(tablesHash(db)).toBe(hash);
  });
});

/** The bound of every wait below. */
const WAIT_MS = 400_000;
const until = (ready: () => boolean, what: string) => waitUntil(ready, what, WAIT_MS);

describe('entity-git watch on a "messages" database its application writes in another process', () => {
  it('commits each turn once complete, and ends with the ids of a fresh backfill of the final database', async () => {
    const SESSIONS = 2;
    const TURNS = 9;
    const db = join(dir, 'live.sqlite');
    new MessagesApp(db, { create: true }).close();
    const root = join(dir, 'live-root');
    const watch = start(COMMAND[0]!, [
      ...COMMAND.slice(1),
      '--db',
      db,
      '--root',
      root,
      'watch',
      '--interval',
      '20',
      // The writer dates its rows in the past: with the default quiet time its open turns would be quiet.
      '--quiet-time',
      '100000h',
      '--json',
    ]);
    await until(() => watch.out.some((l) => l.includes('"watching"')), 'the watch to start');
    expect(JSON.parse(watch.out.find((l) => l.includes('"watching"'))!)).toMatchObject({ recognised: 'messages' });
    const writer = start(process.execPath, [builtChild(CHILD), db, String(SESSIONS), String(TURNS), '5']);
    expect(await writer.exit).toBe(0);
    expect(writer.out.at(-1)).toBe('done');

    const hash = tablesHash(db);
    const reference = join(dir, 'live-reference');
    expect((await run(['--db', db, '--root', reference, 'sync'])).code).toBe(0);
    const ids = Array.from({ length: SESSIONS }, (_, i) => `live-${i}`);
    const expected = Object.fromEntries(ids.map((id) => [id, revParseAll(join(reference, id))]));
    await until(
      () =>
        ids.every((id) => {
          try {
            return JSON.stringify(revParseAll(join(root, id))) === JSON.stringify(expected[id]);
          } catch {
            return false;
          }
        }),
      'the watch to mirror the last turn',
    );
    watch.child.kill('SIGTERM');
    expect(await watch.exit).toBe(0);
    expect(watch.err.join('')).not.toMatch(/failed to sync/);
    for (const id of ids) {
      const repo = join(root, id);
      expect(revParseAll(repo)).toEqual(expected[id]);
      // Regenerated at turns 4 and 8, the second prompt edited at turn 5; the head on the last reply.
      expect(Object.keys(expected[id]!).sort()).toEqual(
        ['HEAD', 'main', `retry-${id}-4-r`, `fork-${id}-5-u`, `retry-${id}-8-r`].sort(),
      );
      expect(expected[id]!.HEAD).toBe(`retry-${id}-8-r`);
      // Every move of a branch went forward: no turn was committed before its last row.
      for (const branch of Object.keys(expected[id]!).filter((b) => b !== 'HEAD'))
        for (const entry of git(repo, 'reflog', '--format=%H', branch).split('\n'))
          git(repo, 'merge-base', '--is-ancestor', entry, branch);
      git(repo, 'fsck', '--strict');
      expect(git(repo, 'status', '--porcelain')).toBe('');
    }
    expect(tablesHash(db)).toBe(hash);
  }, 600_000);
});
