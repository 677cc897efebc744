import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, MysqlDialect, sql } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  SqlDagSource,
  SqlDagWriter,
  createSqlStore,
  openPostgres,
  openSqlite,
  type AppendNodeInput,
  type SqlStore,
} from '../src/index.js';
import { reusablePostgres } from './helpers/reusable-postgres.js';
import { tempDir } from './helpers/temp.js';

const code = (c: string) => expect.objectContaining({ name: 'EntityGitError', code: c });
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const pg = reusablePostgres();
afterAll(() => pg.close());

async function drain(iterable: AsyncIterable<unknown>): Promise<number> {
  let n = 0;
  for await (const _ of iterable) n++;
  return n;
}

const engines: Array<[string, () => Promise<SqlStore>]> = [
  [
    'sqlite',
    async () => {
      const tmp = tempDir();
      cleanups.push(tmp.remove);
      const store = await openSqlite({ file: join(tmp.dir, 'e.sqlite') });
      cleanups.push(() => store.close());
      return store;
    },
  ],
  ['postgres', () => pg.empty()],
];

describe.each(engines)('typed errors on %s', (_name, open) => {
  it('a workdir that is relative, missing, a file, or unstorable is INVALID_WORKDIR; a good one is stored normalized', async () => {
    const store = await open();
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const dir = join(tmp.dir, 'project');
    mkdirSync(dir);
    writeFileSync(join(tmp.dir, 'file.txt'), 'x');
    await expect(store.projects.createProject({ name: 'a', workdir: 'project' })).rejects.toThrow(
      code('INVALID_WORKDIR'),
    );
    await expect(store.projects.createProject({ name: 'b', workdir: join(tmp.dir, 'missing') })).rejects.toThrow(
      code('INVALID_WORKDIR'),
    );
    await expect(store.projects.createProject({ name: 'c', workdir: join(tmp.dir, 'file.txt') })).rejects.toThrow(
      code('INVALID_WORKDIR'),
    );
    await expect(
      store.projects.createProject({ name: 'd', workdir: join(tmp.dir, 'file.txt', 'below') }),
    ).rejects.toThrow(code('INVALID_WORKDIR'));
    await expect(store.projects.createProject({ name: 'e', workdir: `${dir}\u0000` })).rejects.toThrow(
      code('INVALID_WORKDIR'),
    );
    expect(await store.projects.listProjects()).toEqual([]);
    const p = await store.projects.createProject({ name: 'ok', workdir: `${dir}/../project/` });
    expect(p.workdir).toBe(dir);
    expect((await store.projects.getProject(p.id))!.workdir).toBe(dir);
  });

  it('duplicate project names are DUPLICATE_PROJECT, also when created at the same moment', async () => {
    const store = await open();
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, () => store.projects.createProject({ name: 'race', workdir: tmp.dir })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toEqual(code('DUPLICATE_PROJECT'));
    await expect(
      store.projects.createProject({
        name: 'other',
        workdir: tmp.dir,
        id: (await store.projects.listProjects())[0]!.id,
      }),
    ).rejects.toThrow(code('INVALID_PROJECT'));
    expect((await store.projects.listProjects()).map((p) => p.name)).toEqual(['race']);
  });

  it('a session in an unknown project is PROJECT_NOT_FOUND (the foreign key holds)', async () => {
    const store = await open();
    await expect(store.writer.createSession({ id: 's', project_id: 'nope' })).rejects.toThrow(
      code('PROJECT_NOT_FOUND'),
    );
    expect(await store.dag.getSession('s')).toBeNull();
  });

  it("strings the engine's text cannot hold faithfully are refused, by field (NUL in PostgreSQL only)", async () => {
    const store = await open();
    await expect(store.writer.createSession({ id: 'lone\ud800' })).rejects.toThrow(code('INVALID_ID'));
    await expect(store.writer.createSession({ id: 's', title: 'bad \udc00 title' })).rejects.toThrow(
      code('INVALID_SESSION'),
    );
    await store.writer.createSession({ id: 's' });
    await expect(
      store.writer.appendNode({ id: 'n', session_id: 's', role: 'user', content: 'x', predecessor: '\ud800' }),
    ).rejects.toThrow(code('INVALID_ID'));
    await expect(store.projects.createProject({ name: 'p\ud800', workdir: '/' })).rejects.toThrow(
      code('INVALID_PROJECT'),
    );
    // Looking such session ids up is refused by the same code (never "not found": a row another program stored may hold one).
    await expect(store.dag.getSession('lone\ud800')).rejects.toThrow(code('INVALID_ID'));
    await expect(store.writer.fillNode('s', 'x\u0000', 'x')).rejects.toThrow(code('NODE_NOT_FOUND'));
    // NUL: SQLite's text holds it (stored and read back whole), PostgreSQL's cannot.
    await store.writer.createSession({ id: 'z' });
    const nulSession = store.writer.createSession({ id: 'nul\u0000', title: 'nul \u0000 title' });
    const nulNode = store.writer.appendNode({ id: 'n\u0000', session_id: 'z', role: 'user', content: 'x' });
    if (_name === 'postgres') {
      await expect(nulSession).rejects.toThrow(code('INVALID_ID'));
      await expect(nulNode).rejects.toThrow(code('INVALID_ID'));
      await expect(store.writer.createSession({ id: 't', title: 'nul \u0000' })).rejects.toThrow(
        code('INVALID_SESSION'),
      );
      await expect(drain(store.dag.nodesAfter('s\u0000'))).rejects.toThrow(code('INVALID_ID'));
      expect((await store.dag.listSessions()).sort()).toEqual(['s', 'z']);
    } else {
      expect(await nulSession).toMatchObject({ id: 'nul\u0000', title: 'nul \u0000 title' });
      expect((await store.dag.getSession('nul\u0000'))!.title).toBe('nul \u0000 title');
      expect((await nulNode).id).toBe('n\u0000');
      expect(await drain(store.dag.nodesAfter('s\u0000'))).toBe(0);
      expect(await drain(store.dag.nodesAfter('z'))).toBe(1);
    }
    // Inside JSON they are fine: JSON text escapes them.
    const n = await store.writer.appendNode({
      id: 'n',
      session_id: 's',
      role: 'user',
      content: 'lone \ud800 and \u0000',
    });
    const [read] = await Promise.all([
      (async () => {
        for await (const x of store.dag.nodesAfter('s')) return x;
      })(),
    ]);
    expect(read!.content).toBe(n.content);
  });

  it('fillNode with content JSON cannot represent is NON_JSON_VALUE and changes nothing', async () => {
    const store = await open();
    await store.writer.createSession({ id: 's' });
    await store.writer.appendNode({
      id: 'a',
      session_id: 's',
      role: 'assistant',
      content: 'kept',
      metadata: { pending: true },
    });
    await expect(store.writer.fillNode('s', 'a', { x: undefined } as never)).rejects.toThrow(code('NON_JSON_VALUE'));
    await expect(store.writer.fillNode('s', 'a', Number.NaN)).rejects.toThrow(code('NON_JSON_VALUE'));
    await expect(store.writer.fillNode('s', 'a', 'x', { big: 10n } as never)).rejects.toThrow(code('NON_JSON_VALUE'));
    for await (const n of store.dag.nodesAfter('s'))
      expect(n).toMatchObject({ content: 'kept', metadata: { pending: true } });
  });

  it('appendNodes is all or nothing', async () => {
    const store = await open();
    await store.writer.createSession({ id: 's' });
    await store.writer.createSession({ id: 't' });
    const good = (id: string, session_id = 's'): AppendNodeInput => ({ id, session_id, role: 'user', content: id });
    await expect(
      store.writer.appendNodes([good('a'), good('b'), { ...good('c'), role: 'robot' as never }]),
    ).rejects.toThrow(code('INVALID_NODE'));
    await expect(store.writer.appendNodes([good('a'), good('a', 't')])).rejects.toThrow(code('DAG_DUPLICATE_ID'));
    await expect(store.writer.appendNodes([good('a'), good('b', 'nope')])).rejects.toThrow(code('SESSION_NOT_FOUND'));
    expect(await drain(store.dag.nodesAfter('s'))).toBe(0);
    const nodes = await store.writer.appendNodes([good('a'), good('x', 't'), good('b'), good('y', 't')]);
    expect(nodes.map((n) => [n.id, n.seq])).toEqual([
      ['a', 1],
      ['x', 1],
      ['b', 2],
      ['y', 2],
    ]);
    expect(await store.writer.appendNodes([])).toEqual([]);
  });

  it('a node id is unique across sessions: DAG_DUPLICATE_ID', async () => {
    const store = await open();
    await store.writer.createSession({ id: 's' });
    await store.writer.createSession({ id: 't' });
    await store.writer.appendNode({ id: 'a', session_id: 's', role: 'user', content: 'x' });
    await expect(store.writer.appendNode({ id: 'a', session_id: 't', role: 'user', content: 'x' })).rejects.toThrow(
      code('DAG_DUPLICATE_ID'),
    );
  });

  it('bad page options are INVALID_OPTION', async () => {
    const store = await open();
    await store.writer.createSession({ id: 's' });
    for (const batchSize of [0, -1, 1.5, 100_001, Number.NaN]) {
      await expect(drain(store.dag.nodesAfter('s', 0, { batchSize }))).rejects.toThrow(code('INVALID_OPTION'));
    }
    await expect(drain(store.dag.nodesAfter('s', Number.NaN))).rejects.toThrow(code('INVALID_OPTION'));
    expect(() => new SqlDagSource({ db: store.db, batchSize: 0 })).toThrow(code('INVALID_OPTION'));
  });

  it('a stored row the model cannot take is DB_ERROR', async () => {
    const store = await open();
    await store.writer.createSession({ id: 's' });
    await sql`insert into nodes (id, session_id, seq, role, content, created_at) values ('j', 's', 1, 'user', '{oops', 1)`.execute(
      store.db,
    );
    await expect(drain(store.dag.nodesAfter('s'))).rejects.toThrow(code('DB_ERROR'));
    await expect(store.writer.fillNode('s', 'j', 'repaired')).rejects.toThrow(code('DB_ERROR'));
  });

  // One code for one cause (issue #26, item 8): an id the model refuses is INVALID_ID whichever
  // side finds it — the writer, or the reader of a row another program stored.
  it('a stored node with an empty or over-1,024-byte id is INVALID_ID, as the writer says', async () => {
    const store = await open();
    await store.writer.createSession({ id: 's' });
    await expect(store.writer.appendNode({ id: '', session_id: 's', role: 'user', content: 'x' })).rejects.toThrow(
      code('INVALID_ID'),
    );
    await sql`insert into nodes (id, session_id, seq, role, content, created_at) values ('', 's', 1, 'user', '"x"', 1)`.execute(
      store.db,
    );
    await expect(drain(store.dag.nodesAfter('s'))).rejects.toThrow(code('INVALID_ID'));
    await store.writer.createSession({ id: 't' });
    const long = 'n'.repeat(1025);
    await expect(store.writer.appendNode({ id: long, session_id: 't', role: 'user', content: 'x' })).rejects.toThrow(
      code('INVALID_ID'),
    );
    await sql`insert into nodes (id, session_id, seq, role, content, created_at) values (${long}, 't', 1, 'user', '"x"', 1)`.execute(
      store.db,
    );
    await expect(drain(store.dag.nodesAfter('t'))).rejects.toThrow(code('INVALID_ID'));
  });

  it('a session id the engine\'s text cannot hold or an empty one is INVALID_ID before any query, never "not found"', async () => {
    const store = await open();
    if (_name === 'postgres') {
      await expect(store.dag.getSession('a\0b')).rejects.toThrow(/holds NUL, which PostgreSQL text cannot hold/);
      await expect(drain(store.dag.nodesAfter('a\0b'))).rejects.toThrow(code('INVALID_ID'));
    } else expect(await store.dag.getSession('a\0b')).toBeNull();
    await expect(store.dag.getSession('a\udc00b')).rejects.toThrow(code('INVALID_ID'));
    await expect(store.dag.getSession('')).rejects.toThrow(code('INVALID_ID'));
    expect(await store.dag.getSession('nope')).toBeNull();
  });
});

describe('typed errors opening stores', () => {
  it('bad options are INVALID_OPTION', async () => {
    await expect(openSqlite({ file: '' })).rejects.toThrow(code('INVALID_OPTION'));
    await expect(openSqlite({ file: '/tmp/x.sqlite', busyTimeoutMs: -1 })).rejects.toThrow(code('INVALID_OPTION'));
    await expect(openSqlite({ file: ':memory:', names: { nodes: { sequence: 'n' } as never } })).rejects.toThrow(
      code('INVALID_OPTION'),
    );
    await expect(openPostgres({ connectionString: '' })).rejects.toThrow(code('INVALID_OPTION'));
    const memory = await openSqlite({ file: ':memory:' });
    await expect(createSqlStore({ db: memory.db, engine: 'oracle' as never })).rejects.toThrow(code('INVALID_OPTION'));
    await memory.close();
  });

  it('a dialect the writer does not know: reads work, writing and migrating ask for `engine`', async () => {
    const db = new Kysely<any>({
      dialect: new MysqlDialect({
        pool: async () => {
          throw new Error('never connected');
        },
      }),
    });
    expect(() => new SqlDagSource({ db })).not.toThrow();
    expect(() => new SqlDagWriter({ db })).toThrow(code('INVALID_OPTION'));
    await expect(createSqlStore({ db })).rejects.toThrow(code('INVALID_OPTION'));
  });

  it('a file that cannot be opened is DB_ERROR', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    await expect(openSqlite({ file: join(tmp.dir, 'no-such-dir', 'x.sqlite') })).rejects.toThrow(code('DB_ERROR'));
    await expect(openSqlite({ file: tmp.dir })).rejects.toThrow(code('DB_ERROR'));
    writeFileSync(
      join(tmp.dir, 'junk.sqlite'),
      'this is not a database, just text that is long enough to look like a header.'.repeat(20),
    );
    await expect(openSqlite({ file: join(tmp.dir, 'junk.sqlite') })).rejects.toThrow(code('DB_ERROR'));
  });

  it('an unreachable PostgreSQL is DB_ERROR', async () => {
    await expect(openPostgres({ connectionString: 'postgres://nobody:x@127.0.0.1:1/none' })).rejects.toThrow(
      code('DB_ERROR'),
    );
  });

  it('a closed store is DB_ERROR, and close is idempotent', async () => {
    const store = await openSqlite({ file: ':memory:' });
    await store.close();
    await store.close();
    await expect(store.dag.listSessions()).rejects.toThrow(code('DB_ERROR'));
    await expect(store.writer.createSession({ id: 's' })).rejects.toThrow(code('DB_ERROR'));
  });
});
