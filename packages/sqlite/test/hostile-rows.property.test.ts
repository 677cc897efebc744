// Generated hostile rows and mapping configurations. Rows another program stored in a real SQLite
// file (any text in the JSON columns, any id, seq, role, predecessor) read back as nodes the model
// accepts or as a typed error, and a session that reads mirrors into files under the root only.
// A mapping of any shape is a MappingInput or INVALID_OPTION, never another throw.
import { createNodeMirror } from '@entity-git/node-fs';
import { isEntityGitError, validateNode, type DagNode } from '@entity-git/core';
import fc from 'fast-check';
import { sql } from 'kysely';
import { mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqlite, parseMapping, type SqlStore } from '../src/index.js';
import { decodeNode } from '../src/rows.js';

let dir = '';
let store: SqlStore;
beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'eg-hostile-rows-')));
  store = await openSqlite({ file: join(dir, 'dag.db') });
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ids = fc.oneof(
  fc.constantFrom(
    'n1',
    'n2',
    'n3',
    '',
    '.',
    '..',
    '../../etc/passwd',
    '/abs',
    'a/b',
    'x.lock',
    '\0',
    'refs/heads/main',
  ),
  fc.string({ unit: 'binary', maxLength: 20 }),
);
/** What a JSON column of someone else's row may hold: JSON text of anything, broken text, numbers, bytes. */
const jsonColumn = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom('{oops', '1e999', '-0', '"\\ud800"', '[1,', 'null', '9007199254740993'),
  fc.integer(),
  fc.double(),
  fc.constant(null),
);
const hostileRow = fc.record({
  id: ids,
  seq: fc.oneof(fc.integer({ min: -2, max: 6 }), fc.double()),
  role: fc.oneof(fc.constantFrom('user', 'assistant', 'tool', 'system'), fc.string({ maxLength: 6 })),
  content: jsonColumn,
  metadata: jsonColumn,
  predecessor: fc.option(ids),
  caller: fc.option(ids),
  created_at: fc.oneof(fc.integer({ min: 0, max: 2_000_000_000 }), fc.double(), fc.string({ maxLength: 5 })),
});

const typedOr = async <T>(work: () => Promise<T>): Promise<T | 'typed'> => {
  try {
    return await work();
  } catch (err) {
    if (!isEntityGitError(err)) throw err;
    return 'typed';
  }
};

describe('rows, generated', () => {
  it('decodeNode: any row values give a valid node or a typed error', () => {
    fc.assert(
      fc.property(hostileRow, (row) => {
        try {
          validateNode(decodeNode({ ...row, session_id: 's' }) as DagNode);
        } catch (err) {
          if (!isEntityGitError(err)) throw err;
        }
      }),
      { numRuns: 300 },
    );
  });

  it('rows written by another program into a real SQLite file: nodes or a typed error; a mirror writes only under its root', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(hostileRow, { minLength: 1, maxLength: 5 }), async (rows) => {
        const sessionId = `s${++run}`;
        await store.writer.createSession({ id: sessionId });
        for (const r of rows)
          await sql`insert or ignore into nodes (id, session_id, seq, role, content, metadata, predecessor, caller, created_at)
            values (${r.id}, ${sessionId}, ${r.seq}, ${r.role}, ${r.content}, ${r.metadata}, ${r.predecessor}, ${r.caller}, ${r.created_at})`.execute(
            store.db,
          );
        const read = await typedOr(async () => {
          const out: DagNode[] = [];
          for await (const n of store.dag.nodesAfter(sessionId)) out.push(n);
          return out;
        });
        if (read === 'typed') return;
        for (const n of read) validateNode(n);
        const root = join(dir, `root-${run}`);
        const mirror = createNodeMirror({ dag: store.dag, root });
        await typedOr(() => mirror.sync(sessionId));
        const outside = readdirSync(dir).filter((f) => !/^(dag\.db.*|root-\d+)$/.test(f));
        expect(outside).toEqual([]);
        expect(relative(root, mirror.repoPath(sessionId)).startsWith('..')).toBe(false);
      }),
      { numRuns: 25 },
    );
  });
});

describe('mapping configurations, generated', () => {
  const name = fc.oneof(
    fc.constantFrom('messages', 'id', 'session_id', 'seq', 'role', 'content', 'created_at'),
    fc.string({ maxLength: 6 }),
    fc.anything(),
  );
  const source = fc.oneof(
    name,
    fc.record({ column: name, path: fc.array(name, { maxLength: 3 }) }),
    fc.array(name, { maxLength: 2 }),
  );
  const mapping = fc.record(
    {
      sessions: fc.oneof(
        fc.record(
          {
            table: name,
            id: name,
            created_at: name,
            title: source,
            metadata: source,
            json: fc.array(name, { maxLength: 2 }),
          },
          { requiredKeys: [] },
        ),
        fc.anything(),
      ),
      nodes: fc.oneof(
        fc.record(
          {
            table: name,
            id: name,
            session_id: name,
            seq: fc.oneof(name, fc.record({ column: name, from: fc.constantFrom(0, 1, 2) }), fc.record({ rank: name })),
            role: fc.oneof(
              source,
              fc.record({
                from: source,
                values: fc.dictionary(
                  fc.string({ maxLength: 4 }),
                  fc.constantFrom('user', 'assistant', 'tool', 'system', 'root'),
                ),
              }),
            ),
            content: source,
            predecessor: fc.oneof(name, fc.constant(null)),
            created_at: name,
            tokens: fc.oneof(fc.array(source, { maxLength: 2 }), fc.anything()),
            inline_tools: fc.oneof(fc.record({ from: source, name: fc.array(name, { maxLength: 2 }) }), fc.anything()),
            open: fc.anything(),
            extra: fc.anything(),
          },
          { requiredKeys: [] },
        ),
        fc.anything(),
      ),
    },
    { requiredKeys: [] },
  );

  it('parseMapping: a MappingInput or INVALID_OPTION, whatever the shape', () => {
    fc.assert(
      fc.property(fc.oneof(mapping, fc.anything()), (value) => {
        try {
          parseMapping(value);
        } catch (err) {
          expect(isEntityGitError(err, 'INVALID_OPTION')).toBe(true);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('openSqlite with any mapping: a store or a typed error, and no file is added beside the database', async () => {
    await fc.assert(
      fc.asyncProperty(mapping, async (m) => {
        const before = readdirSync(dir).sort();
        const opened = await typedOr(() => openSqlite({ file: join(dir, 'dag.db'), mapping: m as never }));
        if (opened !== 'typed') await opened.close();
        expect(readdirSync(dir).sort()).toEqual(before);
      }),
      { numRuns: 40 },
    );
  });
});
