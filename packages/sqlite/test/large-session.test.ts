import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_BATCH_SIZE, openPostgres, openSqlite, type AppendNodeInput, type SqlStore } from '../src/index.js';
import { freshDatabase } from './helpers/postgres.js';
import { rowCounter } from './helpers/row-counter.js';
import { tempDir } from './helpers/temp.js';

const COUNT = 20_000;
const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const engines: Array<[string, (plugin: ReturnType<typeof rowCounter>['plugin']) => Promise<SqlStore>]> = [
  [
    'sqlite',
    async (plugin) => {
      const tmp = tempDir();
      cleanups.push(tmp.remove);
      return openSqlite({ file: join(tmp.dir, 'large.sqlite'), plugins: [plugin] });
    },
  ],
  [
    'postgres',
    async (plugin) => {
      const database = await freshDatabase();
      cleanups.push(database.drop);
      return openPostgres({ connectionString: database.url, plugins: [plugin] });
    },
  ],
];

describe.each(engines)('a session of 20,000 nodes on %s', (_name, open) => {
  it('is read in keyset pages of batchSize rows, lazily, never all at once', async () => {
    const counter = rowCounter('nodes');
    const store = await open(counter.plugin);
    cleanups.push(() => store.close());
    await store.writer.createSession({ id: 'long' });
    const inputs: AppendNodeInput[] = Array.from({ length: COUNT }, (_, i) => ({
      id: `n${i + 1}`,
      session_id: 'long',
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: { text: `message ${i + 1} `.repeat(8) },
      predecessor: i === 0 ? null : `n${i}`,
      created_at: 1_700_000_000 + i,
    }));
    await store.writer.appendNodes(inputs);

    // Lazy: taking the first nodes costs one page, not the session.
    counter.batches.length = 0;
    const first: number[] = [];
    for await (const n of store.dag.nodesAfter('long')) {
      first.push(n.seq);
      if (first.length === 10) break;
    }
    expect(first).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(counter.batches).toEqual([DEFAULT_BATCH_SIZE]);

    // Whole: every node once, in order, in pages of the default size, plus the empty page that ends it.
    counter.batches.length = 0;
    let expected = 1;
    for await (const n of store.dag.nodesAfter('long')) {
      if (n.seq !== expected) throw new Error(`seq ${n.seq} where ${expected} was due`);
      expected++;
    }
    expect(expected - 1).toBe(COUNT);
    expect(counter.batches).toEqual([...Array(COUNT / DEFAULT_BATCH_SIZE).fill(DEFAULT_BATCH_SIZE), 0]);

    // A caller's batch size is honoured, and a short last page ends the read without another query.
    counter.batches.length = 0;
    let seen = 0;
    for await (const _ of store.dag.nodesAfter('long', 0, { batchSize: 3000 })) seen++;
    expect(seen).toBe(COUNT);
    expect(counter.batches).toEqual([3000, 3000, 3000, 3000, 3000, 3000, 2000]);

    // Incremental: what the mirror does after its last mirrored seq reads only the tail.
    counter.batches.length = 0;
    const tail: string[] = [];
    for await (const n of store.dag.nodesAfter('long', COUNT - 7)) tail.push(n.id);
    expect(tail).toEqual(['n19994', 'n19995', 'n19996', 'n19997', 'n19998', 'n19999', 'n20000']);
    expect(counter.batches).toEqual([7]);
  });
});
