import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DagNode } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { LibSQLStore } from '@mastra/libsql';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MastraDag, MAX_BATCH_SIZE, openMastraSqlite, type MastraStore } from '../src/index.js';
import { cleanupDirs, refs, tempDir } from './helpers/git.js';
import { haveConversations, scriptedAgent } from './helpers/mastra-agent.js';

afterAll(cleanupDirs);

const T0 = Date.UTC(2025, 2, 3, 10, 0, 0);
const at = (s: number) => new Date(T0 + s * 1000);
const text = (threadId: string, id: string, s: number, role: 'user' | 'assistant' = 'user') => ({
  id,
  threadId,
  resourceId: 'user-1',
  role,
  type: 'v2',
  createdAt: at(s),
  content: { format: 2, parts: [{ type: 'text', text: `${id} says hi` }] },
});
const expectCode = (p: Promise<unknown>, code: string) =>
  expect(p).rejects.toMatchObject({ name: 'EntityGitError', code });

async function read(dag: MastraDag, id: string, afterSeq?: number, batchSize?: number): Promise<DagNode[]> {
  const out: DagNode[] = [];
  for await (const n of dag.nodesAfter(id, afterSeq, batchSize === undefined ? undefined : { batchSize })) out.push(n);
  return out;
}

describe('MastraDag keeps the DagSource contract on a database made by Mastra', () => {
  const file = join(tempDir(), 'mastra.db');
  const storage = new LibSQLStore({ url: `file:${file}` });
  let store: MastraStore;
  beforeAll(async () => {
    await storage.init();
    for (const [i, id] of ['m', 'b', 'z', 'a'].entries())
      await storage.saveThread({
        thread: { id, resourceId: 'user-1', title: id, createdAt: at(i), updatedAt: at(i), metadata: {} },
      });
    await storage.saveMessages({
      messages: Array.from({ length: 13 }, (_, i) =>
        text('m', `n${String(i + 1).padStart(2, '0')}`, 10 + i, i % 2 ? 'assistant' : 'user'),
      ) as never,
      format: 'v2',
    });
    store = await openMastraSqlite({ file });
  });
  afterAll(() => store?.close());

  it('lists threads in creation order; an unknown thread has no row, no head and no nodes', async () => {
    expect(await store.dag.listSessions()).toEqual(['m', 'b', 'z', 'a']);
    expect(await store.dag.getSession('nope')).toBeNull();
    expect(await store.dag.getHead('nope')).toBeNull();
    expect(await store.dag.getHead('m')).toBeNull();
    expect(await read(store.dag, 'nope')).toEqual([]);
    expect(await read(store.dag, 'b')).toEqual([]);
    expect(store.dag.changeMarker).toBeUndefined();
    // A thread without messages: a repository without a commit.
    const mirror = createNodeMirror({ dag: store.dag, root: tempDir() });
    expect(await mirror.sync('b')).toMatchObject({ commitsWritten: 0, head: null });
    expect(await mirror.branches('b')).toEqual([]);
  });

  it('nodesAfter is exclusive, in seq order, the same for every batch size; an early stop leaves nothing behind', async () => {
    const all = await read(store.dag, 'm');
    expect(all.map((n) => [n.seq, n.id])).toEqual(
      Array.from({ length: 13 }, (_, i) => [i + 1, `n${String(i + 1).padStart(2, '0')}`]),
    );
    expect(all.map((n) => n.predecessor)).toEqual([null, ...all.slice(0, -1).map((n) => n.id)]);
    for (const batchSize of [1, 2, 5, 12, 13, 14, 1000]) {
      expect(await read(store.dag, 'm', 0, batchSize)).toEqual(all);
      expect((await read(store.dag, 'm', 4, batchSize)).map((n) => n.seq)).toEqual([5, 6, 7, 8, 9, 10, 11, 12, 13]);
    }
    expect(await read(store.dag, 'm', 13)).toEqual([]);
    expect(await read(store.dag, 'm', 100)).toEqual([]);
    const first: number[] = [];
    for await (const n of store.dag.nodesAfter('m', 0, { batchSize: 2 })) {
      first.push(n.seq);
      if (first.length === 3) break;
    }
    expect(first).toEqual([1, 2, 3]);
    const [copy] = await read(store.dag, 'm');
    (copy!.content as unknown[]).push('changed');
    expect((await read(store.dag, 'm'))[0]!.content).toEqual([{ type: 'text', text: 'n01 says hi' }]);
  });

  it('messages saved while a reader pages are read once each, in order; one saved with an older time renumbers', async () => {
    await storage.saveMessages({ messages: [text('z', 'z1', 50), text('z', 'z2', 51, 'assistant')] as never });
    const seen: string[] = [];
    let added = 0;
    for await (const n of store.dag.nodesAfter('z', 0, { batchSize: 1 })) {
      seen.push(n.id);
      if (added < 3) await storage.saveMessages({ messages: [text('z', `late${++added}`, 100 + added)] as never });
    }
    expect(seen).toEqual(['z1', 'z2', 'late1', 'late2', 'late3']);
    const mirror = createNodeMirror({ dag: store.dag, root: tempDir() });
    await mirror.sync('z');
    // Mastra takes a message with any createdAt: the thread's order, and so the seqs, follow it.
    await storage.saveMessages({ messages: [text('z', 'late0', 100)] as never });
    // The incremental sync meets a committed node under another seq: it reads the thread whole and
    // commits the turns whose nodes moved again (the old tip stays in the reflog).
    const before = refs(mirror.repoPath('z'));
    const resynced = await mirror.sync('z');
    expect(resynced.derivation).toBe('full');
    expect(refs(mirror.repoPath('z'))).not.toEqual(before);
    expect((await mirror.verify('z')).ok).toBe(true);
    const fresh = createNodeMirror({ dag: store.dag, root: tempDir() });
    await fresh.sync('z');
    expect(refs(mirror.repoPath('z'))).toEqual(refs(fresh.repoPath('z')));
    expect((await read(store.dag, 'z')).map((n) => [n.seq, n.id])).toEqual([
      [1, 'z1'],
      [2, 'z2'],
      [3, 'late0'],
      [4, 'late1'],
      [5, 'late2'],
      [6, 'late3'],
    ]);
  });

  it('refuses bad ids and options with typed errors, before any query', async () => {
    await expectCode(store.dag.getSession(''), 'INVALID_ID');
    await expectCode(store.dag.getSession('a\u0000b'), 'INVALID_ID');
    await expectCode(store.dag.getSession('lone \ud800'), 'INVALID_ID');
    await expectCode(read(store.dag, 'x'.repeat(1025)), 'INVALID_ID');
    await expectCode(read(store.dag, 'm', 0, 0), 'INVALID_OPTION');
    await expectCode(read(store.dag, 'm', 0, MAX_BATCH_SIZE + 1), 'INVALID_OPTION');
    expect(() => new MastraDag({ db: {} as never })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => new MastraDag({ db: store.db, schema: 'a.b' })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
    expect(() => new MastraDag({ db: store.db, waitForReplies: 'no' as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
    await expectCode(openMastraSqlite({ file: 'libsql://example.turso.io' }), 'INVALID_OPTION');
    await expectCode(openMastraSqlite({ file: 'file://elsewhere/x.db' }), 'INVALID_OPTION');
    await expectCode(openMastraSqlite({ file: 'file:%E0%A4%A' }), 'INVALID_OPTION');
    await expectCode(openMastraSqlite({ file: join(tempDir(), 'missing.db') }), 'DB_ERROR');
  });

  it("a database that is not Mastra's is SCHEMA_MISMATCH, and stays byte for byte as it was", async () => {
    const other = join(tempDir(), 'other.db');
    const raw = new Database(other);
    raw.exec(
      "create table mastra_threads (id text primary key, title text); insert into mastra_threads values ('t', 'x')",
    );
    raw.close();
    const bytes = readFileSync(other);
    const wrong = await openMastraSqlite({ file: other });
    await expectCode(wrong.dag.listSessions(), 'SCHEMA_MISMATCH');
    await expectCode(read(wrong.dag, 't'), 'SCHEMA_MISMATCH');
    await wrong.close();
    expect(readFileSync(other).equals(bytes)).toBe(true);
  });

  it('a row the DAG cannot hold is a DB_ERROR naming it; the connection refuses writes', async () => {
    await storage.saveMessages({ messages: [{ ...text('a', 'odd', 1), role: 'narrator' }] as never });
    await expect(read(store.dag, 'a')).rejects.toMatchObject({
      code: 'DB_ERROR',
      data: { table: 'mastra_messages', threadId: 'a', messageId: 'odd' },
    });
    await expect(sql`update mastra_threads set title = 'changed'`.execute(store.db)).rejects.toMatchObject({
      code: 'SQLITE_READONLY',
    });
  });

  it('works over a Kysely the application made, and a file: URL as given to LibSQLStore', async () => {
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new Database(file, { readonly: true }) }) });
    const dag = new MastraDag({ db });
    expect(await read(dag, 'm')).toEqual(await read(store.dag, 'm'));
    await db.destroy();
    const byUrl = await openMastraSqlite({ file: `file://${file}` });
    expect(await byUrl.dag.listSessions()).toEqual(await store.dag.listSessions());
    await byUrl.close();
    await byUrl.close();
  });
});

describe('no change marker: an edit Mastra makes in place is found by the full check', () => {
  it('updateMessages changes a committed reply; verify reports it and a full sync makes the repository equal again', async () => {
    const file = join(tempDir(), 'mastra.db');
    const storage = new LibSQLStore({ url: `file:${file}` });
    await haveConversations(scriptedAgent(storage));
    const store = await openMastraSqlite({ file });
    const mirror = createNodeMirror({ dag: store.dag, root: tempDir() });
    await mirror.sync('notes');
    expect((await mirror.verify('notes')).ok).toBe(true);
    const [, reply] = await storage.getMessages({ threadId: 'notes', format: 'v2' });
    await storage.updateMessages({
      messages: [{ id: reply!.id, content: { parts: [{ type: 'text', text: 'Edited.' }] } } as never],
    });
    const report = await mirror.verify('notes');
    expect(report.ok).toBe(false);
    await mirror.sync('notes', { full: true });
    expect((await mirror.verify('notes')).ok).toBe(true);
    await store.close();
  });
});
