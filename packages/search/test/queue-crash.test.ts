import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createNodeMirror } from '@entity-git/node-fs';
import { openSqlite, type SqlStore } from '@entity-git/sqlite';
import { describe, expect, it } from 'vitest';
import { SearchIndex } from '../src/index.js';
import { git, placeOf, tempDir } from './helpers.js';

const CHILD = fileURLToPath(new URL('./queue-child.ts', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const SESSIONS = ['q-1', 'q-2'];

async function addTurn(store: SqlStore, session: string, k: number, word: string): Promise<void> {
  const prev = k === 1 ? null : `${session}-a${k - 1}`;
  await store.writer.appendNode({
    id: `${session}-u${k}`,
    session_id: session,
    role: 'user',
    content: `ask ${word}`,
    predecessor: prev,
    created_at: 1779500000 + 2 * k,
  });
  await store.writer.appendNode({
    id: `${session}-a${k}`,
    session_id: session,
    role: 'assistant',
    content: `answer ${word}`,
    predecessor: `${session}-u${k}`,
    created_at: 1779500001 + 2 * k,
  });
}

/** Runs the child until every session's update is queued, and kills it. */
function killWithQueue(db: string, root: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX, '--conditions=source', CHILD, db, root], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      if (out.includes('all queued\n')) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(out);
      else reject(new Error(`the child ended by itself (${code}): ${out}${err}`));
    });
  });
}

describe('a process killed with index updates queued', () => {
  it('loses no commit; the next update of each session brings the index to every synced turn', async () => {
    const dir = tempDir();
    const db = join(dir, 'dag.db');
    const root = join(dir, 'sessions');
    const store = await openSqlite({ file: db });
    for (const id of SESSIONS) {
      await store.writer.createSession({ id, created_at: 1779500000 });
      await addTurn(store, id, 1, 'alpha');
    }
    const mirror = createNodeMirror({ dag: store.dag, root });
    const index = new SearchIndex({ root });
    for (const id of SESSIONS) await index.afterSync(await mirror.sync(id));
    for (const id of SESSIONS) await addTurn(store, id, 2, 'bravo');

    expect(await killWithQueue(db, root)).toBe('all queued\n');
    // The turns are committed; the index never got them.
    for (const id of SESSIONS) {
      expect(git(join(root, id), 'log', '--format=%s', 'main').trim().split('\n')).toEqual([
        'turn 2: ask bravo',
        'turn 1: ask alpha',
      ]);
      expect(git(join(root, id), 'fsck', '--strict', '--no-dangling')).toBe('');
    }
    expect((await index.search({ text: 'bravo' })).hits).toEqual([]);

    // q-1's next sync: its result starts from a tip the index never saw, so the update reads the
    // repository from the tip it holds, the lost turn too. q-2 has no new turn: `update` reads it.
    await addTurn(store, 'q-1', 3, 'charlie');
    const next = await mirror.sync('q-1');
    expect(next.extendedBranches?.[0]?.messages.map((m) => m.node.id)).toEqual(['q-1-u3', 'q-1-a3']);
    expect(await index.afterSync(next)).toEqual({ sessions: 1, added: 4, removed: 0 });
    expect(await index.update('q-2')).toEqual({ sessions: 1, added: 2, removed: 0 });
    expect((await index.search({ text: 'bravo' })).hits.map(placeOf)).toEqual([
      'q-2/q-2-a2 assistant main#2 [main]',
      'q-2/q-2-u2 user main#2 [main]',
      'q-1/q-1-a2 assistant main#2 [main]',
      'q-1/q-1-u2 user main#2 [main]',
    ]);
    const rebuilt = new SearchIndex({ root, file: join(dir, 'rebuilt.db') });
    await rebuilt.reindex();
    expect(index.contents()).toEqual(rebuilt.contents());
    rebuilt.close();
    index.close();
    await store.close();
  });
});
