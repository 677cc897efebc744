// The consumer's Node script (scripts/consumer-check.mjs copies it into a project outside the
// workspace): a small DAG in SQLite, mirrored; native git must find every repository sound; the
// search index follows a turn on its write thread.
import { createMirrorService, reconcile } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { SearchIndex, THREAD_WARNING } from '@entity-git/search';
import { createSqlStore, openSqlite } from '@entity-git/sqlite';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const base = process.argv[2];
rmSync(base, { recursive: true, force: true });
mkdirSync(base, { recursive: true });
const store = await openSqlite({ file: join(base, 'a.db') });
await store.writer.createSession({ id: 's1', title: 'Consumer' });
const u1 = await store.writer.appendNode({ id: 'u1', session_id: 's1', role: 'user', content: 'hello' });
const a1 = await store.writer.appendNode({
  id: 'a1',
  session_id: 's1',
  role: 'assistant',
  content: 'hi',
  predecessor: u1.id,
});
await store.writer.appendNode({ id: 'u2', session_id: 's1', role: 'user', content: 'again', predecessor: a1.id });
await store.writer.appendNode({
  id: 'a2',
  session_id: 's1',
  role: 'assistant',
  content: 'hi again',
  predecessor: 'u2',
});
const sessions = join(base, 'sessions');
const mirror = createNodeMirror({ dag: store.dag, root: sessions });
const result = await mirror.sync('s1');
if (result.commitsWritten !== 2) throw new Error(`expected 2 commits: ${JSON.stringify(result)}`);
const service = createMirrorService({ mirror });
service.notify('s1');
await service.drain();
await reconcile({ dag: store.dag, mirror });
const verify = await mirror.verify('s1');
if (!verify.ok) throw new Error(`verify: ${JSON.stringify(verify)}`);
const log = await mirror.log('s1');

// Every repository under the root, wherever the layout puts it: native git checks it.
const gitdirs = execFileSync('find', [sessions, '-type', 'd', '-name', '.git'], { encoding: 'utf8' })
  .trim()
  .split('\n')
  .filter(Boolean);
if (gitdirs.length !== 1) throw new Error(`expected one repository, found ${gitdirs.length}`);
for (const gitdir of gitdirs) {
  execFileSync('git', ['--git-dir', gitdir, 'fsck', '--strict', '--no-progress'], { stdio: 'inherit' });
  const tip = execFileSync('git', ['--git-dir', gitdir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  if (tip !== log[0]?.sha) throw new Error(`native git's HEAD ${tip} is not the mirror's ${log[0]?.sha}`);
  const status = execFileSync('git', ['-C', join(gitdir, '..'), 'status', '--porcelain'], { encoding: 'utf8' });
  if (status !== '') throw new Error(`git status is not clean:\n${status}`);
}

// The search index follows a new turn through its write thread (the shipped dist/ module): no
// warning that it fell back to this thread, and the turn's words are found.
const warnings = [];
process.on('warning', (w) => warnings.push(w));
const index = new SearchIndex({ root: sessions });
await index.update('s1');
await store.writer.appendNode({ id: 'u3', session_id: 's1', role: 'user', content: 'zucchini', predecessor: 'a2' });
await store.writer.appendNode({ id: 'a3', session_id: 's1', role: 'assistant', content: 'noted', predecessor: 'u3' });
const indexed = await index.afterSync(await mirror.sync('s1'));
const found = (await index.search({ text: 'zucchini' })).hits.map((h) => h.node);
index.close();
await new Promise((r) => setImmediate(r));
if (indexed.added !== 2 || found.join() !== 'u3' || warnings.some((w) => w.code === THREAD_WARNING))
  throw new Error(`search: ${JSON.stringify({ indexed, found, warnings: warnings.map((w) => w.message) })}`);
await store.close();

// A Kysely the application owns, from its own node_modules (the peer dependency).
const db = new Kysely({ dialect: new SqliteDialect({ database: new Database(join(base, 'b.db')) }) });
const own = await createSqlStore({ db });
await own.writer.createSession({ id: 's2', title: 'Own kysely' });
if ((await own.dag.getSession('s2'))?.title !== 'Own kysely') throw new Error('the own-kysely store lost its session');
await own.close();
await db.destroy();
console.log(
  `  node: ${result.commitsWritten} commits, verify ok, git fsck --strict and git status clean, HEAD ${log[0]?.sha}; search found the next turn through the write thread`,
);
