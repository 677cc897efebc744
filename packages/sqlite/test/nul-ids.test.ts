// Ids holding NUL, as an application writes them into its own database. SQLite's text holds NUL:
// such a session is mirrored like any other, under its escaped name, with the same commit ids
// from two roots and from the same DAG in MemoryDag. PostgreSQL's text cannot: there the writer
// and the source refuse it by name (INVALID_ID naming PostgreSQL), and nothing is written.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MemoryDag, type DagNode, type DagSource } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openSqlite } from '../src/index.js';
import { reusablePostgres } from './helpers/reusable-postgres.js';
import { tempDir } from './helpers/temp.js';

const SID = 'chat\u0000one';
const code = (c: string) => expect.objectContaining({ name: 'EntityGitError', code: c });
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const pg = reusablePostgres();
afterAll(() => pg.close());

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

async function drain(iterable: AsyncIterable<unknown>): Promise<DagNode[]> {
  const out: DagNode[] = [];
  for await (const n of iterable) out.push(n as DagNode);
  return out;
}

/** Two turns and a retried reply: node ids with NUL at the start, the middle and the end. */
const NODES = [
  { id: '\u0000u1', role: 'user', content: 'Hello', predecessor: null },
  { id: 'a\u00001', role: 'assistant', content: 'Hi!', predecessor: '\u0000u1' },
  { id: 'u2\u0000', role: 'user', content: 'And now?', predecessor: 'a\u00001' },
  { id: 'a2', role: 'assistant', content: 'Now this.', predecessor: 'u2\u0000' },
  { id: 'a2\u0000retry', role: 'assistant', content: 'Or that.', predecessor: 'u2\u0000' },
] as const;

/** Every branch's tip, as native git reports it. */
function tips(repo: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of git(repo, 'for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads')
    .trim()
    .split('\n')) {
    const [name, oid] = line.split(' ');
    out[name!] = oid!;
  }
  return out;
}

async function mirrored(dag: DagSource, root: string) {
  const mirror = createNodeMirror({ dag, root });
  await mirror.sync(SID);
  return mirror;
}

describe('ids with NUL in SQLite', () => {
  it('are stored and read back whole, mirrored under their escaped names, and give the ids MemoryDag gives', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const file = join(tmp.dir, 'app.sqlite');
    const store = await openSqlite({ file });
    cleanups.push(() => store.close());
    await store.writer.createSession({ id: SID, title: 'with NUL', created_at: 1_780_000_000 });
    for (const [i, n] of NODES.entries())
      await store.writer.appendNode({ ...n, session_id: SID, created_at: 1_780_000_001 + i });

    // The file holds the NUL bytes (hex 00), not an escape or a cut id; `=` finds exactly them.
    const raw = new Database(file, { readonly: true });
    cleanups.push(() => raw.close());
    expect(raw.prepare('select hex(id) as h from sessions').get()).toEqual({
      h: Buffer.from(SID).toString('hex').toUpperCase(),
    });
    expect(raw.prepare('select count(*) as n from nodes where session_id = ?').get(SID)).toEqual({ n: 5 });
    expect(raw.prepare('select count(*) as n from nodes where session_id = ?').get('chat')).toEqual({ n: 0 });
    expect(await store.dag.listSessions()).toEqual([SID]);
    expect((await store.dag.getSession(SID))!.id).toBe(SID);
    expect(await store.dag.getSession('chat')).toBeNull();
    const read = await drain(store.dag.nodesAfter(SID));
    expect(read.map((n) => [n.id, n.predecessor])).toEqual(NODES.map((n) => [n.id, n.predecessor]));
    expect(await store.dag.changeMarker(SID)).not.toBeNull();

    const a = await mirrored(store.dag, join(tmp.dir, 'a'));
    const repo = a.repoPath(SID);
    expect(repo).toBe(join(tmp.dir, 'a', 'chat%00one'));
    expect(readdirSync(join(tmp.dir, 'a'))).toEqual(['chat%00one']);
    expect(git(repo, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect(git(repo, 'status', '--porcelain')).toBe('');
    // The retried reply's branch is named for its escaped id; HEAD is on it (the newest leaf).
    const branches = tips(repo);
    expect(Object.keys(branches).sort()).toEqual(['main', 'retry-a2%00retry']);
    expect(git(repo, 'symbolic-ref', 'HEAD')).toBe('refs/heads/retry-a2%00retry\n');
    // File names escape NUL as %00; the JSON keeps the id (NUL written as \u0000).
    expect(git(repo, 'ls-files').trim().split('\n')).toEqual([
      'messages/000001-u-%00u1.json',
      'messages/000002-a-a%001.json',
      'messages/000003-u-u2%00.json',
      'messages/000005-a-a2%00retry.json',
      'meta.json',
    ]);
    const json = readFileSync(join(repo, 'messages', '000002-a-a%001.json'), 'utf8');
    expect(json).toContain('"id": "a\\u00001"');
    expect(JSON.parse(json)).toMatchObject({ id: 'a\u00001', predecessor: '\u0000u1', session_id: SID });
    expect(JSON.parse(readFileSync(join(repo, 'meta.json'), 'utf8')).id).toBe(SID);
    expect(git(repo, 'log', '-1', '--format=%B', 'main')).toContain('Session: chat%00one\n');
    expect(await a.verify(SID)).toMatchObject({ ok: true });

    // Another root, and the same DAG in MemoryDag: the same commits.
    const b = await mirrored(store.dag, join(tmp.dir, 'b'));
    expect(tips(b.repoPath(SID))).toEqual(branches);
    const memory = new MemoryDag();
    await memory.createSession((await store.dag.getSession(SID))!);
    for (const n of read) await memory.addNode(n);
    const m = await mirrored(memory, join(tmp.dir, 'm'));
    expect(tips(m.repoPath(SID))).toEqual(branches);

    // A later turn on main through the writer: the mirror carries on (its change marker moved), HEAD back on main.
    await store.writer.appendNode({
      id: 'u3\u0000',
      session_id: SID,
      role: 'user',
      content: 'More',
      predecessor: 'a2',
    });
    await store.writer.appendNode({
      id: 'a3',
      session_id: SID,
      role: 'assistant',
      content: 'Done.',
      predecessor: 'u3\u0000',
    });
    const next = await a.sync(SID);
    expect(next.commitsWritten).toBe(1);
    expect(git(repo, 'symbolic-ref', 'HEAD')).toBe('refs/heads/main\n');
    expect(existsSync(join(repo, 'messages', '000006-u-u3%00.json'))).toBe(true);
    expect(git(repo, 'fsck', '--strict', '--no-dangling')).toBe('');
    expect((await a.sync(SID)).noop).toBe(true);
  }, 120_000);

  it('a lone surrogate stays refused: SQLite stores text as UTF-8, and it would read back as U+FFFD', async () => {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    const store = await openSqlite({ file: join(tmp.dir, 'app.sqlite') });
    cleanups.push(() => store.close());
    await expect(store.writer.createSession({ id: 'lone\ud800' })).rejects.toThrow(/lone surrogate/);
    await expect(store.dag.getSession('lone\udc00')).rejects.toThrow(code('INVALID_ID'));
    expect(await store.dag.listSessions()).toEqual([]);
  });
});

describe('ids with NUL in PostgreSQL', () => {
  it('are INVALID_ID naming PostgreSQL, when written and when looked up, and nothing is written', async () => {
    const store = await pg.empty();
    const refused = expect.objectContaining({
      name: 'EntityGitError',
      code: 'INVALID_ID',
      message: expect.stringMatching(/holds NUL, which PostgreSQL text cannot hold/),
    });
    await expect(store.writer.createSession({ id: SID })).rejects.toThrow(refused);
    await store.writer.createSession({ id: 'plain' });
    await expect(
      store.writer.appendNode({ id: 'a\u00001', session_id: 'plain', role: 'user', content: 'x' }),
    ).rejects.toThrow(refused);
    await expect(
      store.writer.appendNode({ id: 'n', session_id: 'plain', role: 'user', content: 'x', predecessor: '\u0000' }),
    ).rejects.toThrow(refused);
    await expect(store.dag.getSession(SID)).rejects.toThrow(refused);
    await expect(drain(store.dag.nodesAfter(SID))).rejects.toThrow(refused);
    expect(await store.dag.listSessions()).toEqual(['plain']);
    expect(await drain(store.dag.nodesAfter('plain'))).toEqual([]);
  });
});
