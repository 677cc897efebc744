import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { reconcile } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { openSqlite } from '@entity-git/sqlite';
import { describe, expect, it } from 'vitest';
import { SearchIndex } from '../src/index.js';
import { git, tempDir } from './helpers.js';

const SESSIONS = 5;
const TURNS = 250;
const CHILD = fileURLToPath(new URL('./index-child.ts', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

async function writeDag(file: string): Promise<void> {
  const store = await openSqlite({ file });
  for (let s = 1; s <= SESSIONS; s++) {
    const sid = `crash-${s}`;
    await store.writer.createSession({ id: sid, created_at: 1779500000 });
    let prev: string | null = null;
    for (let k = 1; k <= 2 * TURNS; k++) {
      const id = `${sid}-n${k}`;
      const role = k % 2 === 1 ? 'user' : 'assistant';
      const content = `message ${k} of ${sid}: ${role === 'user' ? 'asks about' : 'answers with'} word${k % 97} and marker${s}`;
      await store.writer.appendNode({
        id,
        session_id: sid,
        role,
        content,
        predecessor: prev,
        created_at: 1779500000 + k,
      });
      prev = id;
    }
  }
  await store.close();
}

/** Runs the child until it prints `synced crash-<n>` (it is then inside that session's index update), and kills it. */
function killDuringUpdate(db: string, root: string, n: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX, '--conditions=source', CHILD, db, root], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      if (out.includes(`synced crash-${n}\n`)) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(out);
      else reject(new Error(`the child ended by itself (${code}): ${out}${err}`));
    });
  });
}

describe('a process killed during an index update', () => {
  it('loses no commit, leaves the index as before that update, and the next sync heals it', async () => {
    const dir = tempDir();
    const db = join(dir, 'dag.db');
    const root = join(dir, 'sessions');
    await writeDag(db);
    const out = await killDuringUpdate(db, root, 3);
    expect(out).toBe('synced crash-1\nindexed crash-1\nsynced crash-2\nindexed crash-2\nsynced crash-3\n');

    // The sync of crash-3 was whole before its index update began: every commit is there.
    const store = await openSqlite({ file: db });
    const mirror = createNodeMirror({ dag: store.dag, root });
    for (const s of [1, 2, 3]) {
      expect((await mirror.verify(`crash-${s}`)).ok).toBe(true);
      expect(git(join(root, `crash-${s}`), 'rev-list', '--count', 'main').trim()).toBe(String(TURNS));
      expect(git(join(root, `crash-${s}`), 'fsck', '--strict', '--no-dangling')).toBe('');
    }
    // The killed update wrote nothing (one transaction): crash-3 is either whole or absent.
    const index = new SearchIndex({ root });
    const counts = () =>
      Object.fromEntries(
        [1, 2, 3, 4, 5].map((s) => [
          s,
          index.contents().messages.filter((m) => (m as { session: string }).session === `crash-${s}`).length,
        ]),
      );
    const after = counts();
    expect([after[1], after[2], after[4], after[5]]).toEqual([2 * TURNS, 2 * TURNS, 0, 0]);
    expect([0, 2 * TURNS]).toContain(after[3]);
    expect((await index.search({ text: 'marker2 word5', limit: 1000 })).hits.length).toBe(
      Array.from({ length: 2 * TURNS }, (_, i) => i + 1).filter((k) => k % 97 === 5).length,
    );

    // The next sync (what `entity-git sync` runs, then the index update of what it wrote) heals it.
    const report = await reconcile({ dag: store.dag, mirror });
    expect(report.ok).toBe(true);
    for (const s of [1, 2, 3, 4, 5]) await index.update(`crash-${s}`);
    expect(counts()).toEqual({ 1: 2 * TURNS, 2: 2 * TURNS, 3: 2 * TURNS, 4: 2 * TURNS, 5: 2 * TURNS });
    const rebuilt = new SearchIndex({ root, file: join(dir, 'rebuilt.db') });
    await rebuilt.reindex();
    expect(rebuilt.contents()).toEqual(index.contents());
    const hits = await index.search({ text: 'marker3 word1', limit: 1000 });
    expect(hits.hits.map((h) => h.node).sort()).toEqual(
      Array.from({ length: 2 * TURNS }, (_, i) => i + 1)
        .filter((k) => k % 97 === 1)
        .map((k) => `crash-3-n${k}`)
        .sort(),
    );
    rebuilt.close();
    index.close();
    await store.close();
  });
});
