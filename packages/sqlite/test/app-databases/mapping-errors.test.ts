import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { KNOWN_SCHEMAS, loadStoreConfig, openSqlite, parseStoreConfig, type MappingInput } from '../../src/index.js';
import { tempDir } from '../helpers/temp.js';
import { MESSAGES_DDL, MessagesApp } from './fixtures/messages-db.js';
import { FLAT_DAG_DDL } from './fixtures/flat-dag-db.js';
import { tablesHash } from './fixtures/table-hash.js';

const tmp = tempDir('entity-git-app-errors-');
afterAll(() => tmp.remove());
let n = 0;

/** A new SQLite file made by `sql`. */
function database(sql: string): string {
  const file = join(tmp.dir, `db-${++n}.sqlite`);
  const db = new Database(file);
  db.exec(sql);
  db.close();
  return file;
}

const messages = KNOWN_SCHEMAS.find((k) => k.name === 'messages')!.mapping;
const withNodes = (nodes: Record<string, unknown>): MappingInput =>
  ({ sessions: messages.sessions, nodes: { ...messages.nodes, ...nodes } }) as MappingInput;
/** What a CLI read command opens a database with. */
const READ = { migrate: false, checkSchema: true } as const;

describe('the mapping in the config file', () => {
  it('is checked at load: INVALID_OPTION naming the key', () => {
    const cases: [unknown, string][] = [
      [{ mapping: withNodes({ sequence: 'n' }) }, 'mapping.nodes.sequence: unknown key'],
      [{ mapping: withNodes({ seq: { column: 'seq', from: 2 } }) }, 'mapping.nodes.seq.from must be 0 or 1'],
      [
        { mapping: withNodes({ role: { from: 'type', values: { llm: 'bot' } } }) },
        'mapping.nodes.role.values.llm must be one of',
      ],
      [{ mapping: withNodes({ content: [] }) }, 'mapping.nodes.content must not be an empty list'],
      [{ mapping: withNodes({ content: 'extra..text' }) }, 'mapping.nodes.content: "extra..text" has an empty key'],
      [{ mapping: withNodes({ open: { roles: ['narrator'] } }) }, 'mapping.nodes.open.roles[0] must be one of'],
      [{ mapping: { sessions: messages.sessions } }, 'mapping.nodes is required'],
      [{ mapping: { ...messages, nodes: { ...messages.nodes, id: undefined } } }, 'mapping.nodes.id is required'],
      [
        { mapping: messages, names: { nodes: { table: 'messages' } } },
        'names.nodes and mapping both describe that table',
      ],
      [
        { mapping: messages, formats: { nodes: { content: 'text' } } },
        'mapping says how each value is read: leave formats out',
      ],
    ];
    for (const [config, message] of cases) {
      let error: unknown;
      try {
        parseStoreConfig(JSON.parse(JSON.stringify(config)), 'app.entity-git.json');
      } catch (err) {
        error = err;
      }
      expect(error, message).toMatchObject({ code: 'INVALID_OPTION' });
      expect((error as Error).message).toContain(`[entity-git] [sqlite] app.entity-git.json: ${message}`);
    }
    const file = join(tmp.dir, 'ok.entity-git.json');
    writeFileSync(file, JSON.stringify({ mapping: messages }));
    expect(loadStoreConfig(file).mapping).toEqual(messages);
  });

  it('is checked against the tables at open: SCHEMA_MISMATCH naming the key, nothing changed', async () => {
    const file = database(MESSAGES_DDL);
    const before = tablesHash(file);
    await expect(openSqlite({ file, mapping: withNodes({ content: 'body' }) })).rejects.toMatchObject({
      code: 'SCHEMA_MISMATCH',
      data: { table: 'messages', column: 'body', key: 'mapping.nodes.content' },
    });
    await expect(openSqlite({ file, mapping: withNodes({ created_at: 'source' }) })).rejects.toMatchObject({
      code: 'SCHEMA_MISMATCH',
      data: { column: 'source', key: 'mapping.nodes.created_at' },
    });
    await expect(openSqlite({ file, mapping: withNodes({ table: 'msgs' }) })).rejects.toMatchObject({
      code: 'SCHEMA_MISMATCH',
      data: { table: 'msgs', key: 'mapping.nodes.table' },
    });
    await expect(openSqlite({ file, mapping: messages, migrate: true })).rejects.toMatchObject({
      code: 'INVALID_OPTION',
    });
    expect(tablesHash(file)).toBe(before);
    // A mapping names an application's database: a missing file is an error, never created.
    const missing = join(tmp.dir, 'missing.sqlite');
    await expect(openSqlite({ file: missing, mapping: messages })).rejects.toMatchObject({ code: 'DB_ERROR' });
    expect(existsSync(missing)).toBe(false);
  });

  it('reads an application value it was not told about as a clear DB_ERROR; JSON that does not parse is kept as text', async () => {
    const file = join(tmp.dir, 'values.sqlite');
    const app = new MessagesApp(file, { create: true });
    app.createSession('s', 0);
    app.user('s', 'u', null, 'hi', 1);
    const row = app.db.prepare(
      'insert into messages (id, session_id, parent_id, role, content, timestamp, extra) values (?, ?, ?, ?, ?, ?, ?)',
    );
    row.run('a', 's', 'u', 'assistant', 'yo', 1779500002, '{oops');
    app.createSession('t', 10);
    row.run('x', 't', null, 'narrator', 'and so', 1779500011, null);
    app.close();
    const store = await openSqlite({ file });
    const nodes = [];
    for await (const node of store.dag.nodesAfter('s')) nodes.push(node);
    expect(nodes[1]).toMatchObject({ id: 'a', content: 'yo', metadata: { row: { extra: '{oops' } } });
    const read = async () => {
      for await (const _ of store.dag.nodesAfter('t'));
    };
    await expect(read()).rejects.toMatchObject({
      code: 'DB_ERROR',
      message: expect.stringContaining(
        'has the role "narrator", which is none of user, assistant, tool, system; map it in mapping.nodes.role.values',
      ),
    });
    await store.close();
  });
});

describe('recognition', () => {
  it("leaves entity-git's own schema as it was: a new file is created and migrated, an existing one read", async () => {
    const fresh = await openSqlite({ file: join(tmp.dir, 'own.sqlite') });
    expect([fresh.recognised, fresh.mapping]).toEqual([null, null]);
    await fresh.writer.createSession({ id: 's' });
    await fresh.close();
    const again = await openSqlite({ file: join(tmp.dir, 'own.sqlite'), ...READ });
    expect([again.recognised, await again.dag.listSessions()]).toEqual([null, ['s']]);
    await again.close();
  });

  it('names the closest known schema for a variant it cannot read, and the keys to set for anything else', async () => {
    const variant = database(
      MESSAGES_DDL.replace('display text, function text, extra text,', 'display text, function text,'),
    );
    const before = tablesHash(variant);
    const err = await openSqlite({ file: variant, ...READ }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'SCHEMA_MISMATCH',
      data: { closest: { schema: 'messages', matched: 10, total: 11, missing: ['messages.extra'] } },
    });
    expect((err as Error).message).toContain(
      'the closest known schema is "messages" (10 of its 11 columns; missing messages.extra); a variant of it is read with a "mapping" in the config',
    );
    expect(tablesHash(variant)).toBe(before);
    // Opened to be written (migrate, the library's default), it gets none of entity-git's tables.
    expect(await openSqlite({ file: variant }).catch((e: unknown) => e)).toMatchObject({
      code: 'SCHEMA_MISMATCH',
      message: expect.stringContaining('so its tables are not added; nothing was changed'),
      data: { closest: { schema: 'messages' } },
    });
    expect(tablesHash(variant)).toBe(before);

    const newer = database(
      FLAT_DAG_DDL.replace('seq integer, data_json text', 'seq integer, payload text').replace(
        /create trigger[\s\S]*?end;/,
        '',
      ),
    );
    expect(await openSqlite({ file: newer, ...READ }).catch((e: unknown) => e)).toMatchObject({
      code: 'SCHEMA_MISMATCH',
      message: expect.stringContaining('table "nodes" has no column "role"'),
      data: { closest: { schema: 'flat-dag', missing: ['nodes.data_json'] } },
    });

    const other = database('create table notes (id integer primary key, body text)');
    const plain = await openSqlite({ file: other, ...READ }).catch((e: unknown) => e);
    expect(plain).toMatchObject({ code: 'SCHEMA_MISMATCH', data: { closest: null } });
    expect((plain as Error).message).toContain(
      'describe the tables with "names" (other names) or "mapping" (other shapes) in the config',
    );
  });

  it('is off with recognise: false (the database is then read as entity-git’s own, and refused)', async () => {
    const file = database(MESSAGES_DDL);
    await expect(openSqlite({ file, ...READ, recognise: false })).rejects.toMatchObject({ code: 'SCHEMA_MISMATCH' });
    const store = await openSqlite({ file, ...READ });
    expect(store.recognised).toBe('messages');
    await store.close();
  });
});
