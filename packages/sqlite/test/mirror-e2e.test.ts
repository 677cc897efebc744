import { join } from 'node:path';
import { createMirror, MemoryDag, type DagSource, type DagWriter } from '@entity-git/core';
import { nodeStorage } from '@entity-git/node-fs';
import { GOLDEN_SESSION, goldenNodes, writeGolden } from '@entity-git/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqlite, type SqlStore } from '../src/index.js';
import { reusablePostgres } from './helpers/reusable-postgres.js';
import { tempDir } from './helpers/temp.js';

const SID = GOLDEN_SESSION.id;
const cleanups: Array<() => unknown> = [];
const pg = reusablePostgres();
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await pg.close();
});

function mirrorOf(dag: DagSource) {
  const tmp = tempDir('entity-git-mirror-');
  cleanups.push(tmp.remove);
  return createMirror({ dag, storage: nodeStorage(), root: join(tmp.dir, 'sessions') });
}

/** The golden DAG as the dispatcher writes it: appends (the writer picks each seq), then the head. */
async function writeThroughWriter(writer: DagWriter, upTo = Number.POSITIVE_INFINITY, from = 0): Promise<void> {
  if (from === 0) await writer.createSession({ ...GOLDEN_SESSION, head: null });
  for (const n of goldenNodes().slice(from, upTo)) {
    const stored = await writer.appendNode({
      id: n.id,
      session_id: n.session_id,
      role: n.role,
      content: n.content,
      predecessor: n.predecessor,
      caller: n.caller,
      created_at: n.created_at,
      metadata: n.metadata,
    });
    if (stored.seq !== n.seq)
      throw new Error(`${n.id}: the writer gave seq ${stored.seq}, the golden DAG has ${n.seq}`);
  }
}

async function reference(fill?: boolean) {
  const memory = new MemoryDag();
  await writeGolden(memory);
  if (fill) await memory.fillNode(SID, 'a6', 'Fixed all three.', { pending: false, tokens: 9 });
  const mirror = mirrorOf(memory);
  await mirror.sync(SID);
  return { branches: await mirror.branches(SID), log: await mirror.log(SID) };
}

const engines: Array<[string, () => Promise<SqlStore>]> = [
  [
    'sqlite',
    async () => {
      const tmp = tempDir();
      cleanups.push(tmp.remove);
      const store = await openSqlite({ file: join(tmp.dir, 'dag.sqlite') });
      cleanups.push(() => store.close());
      return store;
    },
  ],
  ['postgres', () => pg.empty()],
];

describe.each(engines)('nodes written through the %s writer, mirrored by core', (_name, open) => {
  it('give the same commit ids, branches and HEAD as the same DAG in MemoryDag', async () => {
    const expected = await reference();
    const store = await open();
    await writeThroughWriter(store.writer);
    await store.writer.setHead(SID, GOLDEN_SESSION.head);
    const mirror = mirrorOf(store.dag);
    const result = await mirror.sync(SID);
    expect(result.commitsWritten).toBeGreaterThan(0);
    expect(await mirror.branches(SID)).toEqual(expected.branches);
    expect(await mirror.log(SID)).toEqual(expected.log);
    expect(expected.branches.map((b) => b.name).sort()).toEqual(['fork-u2e', 'fork-u4', 'main', 'retry-a4r']);
    expect((await mirror.verify(SID)).ok).toBe(true);
    expect((await mirror.sync(SID)).noop).toBe(true);
  });

  it('mirrored live, turn by turn, with the placeholder filled last, end where a backfill of the final DAG ends', async () => {
    const expected = await reference(true);
    const store = await open();
    const mirror = mirrorOf(store.dag);
    let from = 0;
    for (const upTo of [2, 6, 12, 16, 19]) {
      await writeThroughWriter(store.writer, upTo, from);
      from = upTo;
      await mirror.sync(SID);
    }
    await store.writer.setHead(SID, GOLDEN_SESSION.head);
    await mirror.sync(SID);
    const beforeFill = await mirror.branches(SID);
    await store.writer.fillNode(SID, 'a6', 'Fixed all three.', { pending: false, tokens: 9 });
    const result = await mirror.sync(SID);
    expect(result.commitsWritten).toBeGreaterThan(0);
    expect(await mirror.branches(SID)).toEqual(expected.branches);
    expect(await mirror.branches(SID)).not.toEqual(beforeFill);
    expect((await mirror.verify(SID)).ok).toBe(true);
  });
});
