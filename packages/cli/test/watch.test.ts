import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SearchIndex } from '@entity-git/search';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMAND, git, revParseAll, run, tempDir } from './fixture.js';
import { start, until as waitUntil } from './processes.js';

const WRITER = fileURLToPath(new URL('./fixtures/python_writer.py', import.meta.url));
const SESSIONS = 3;
const TURNS = 30;
const dir = tempDir('entity-git-watch-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The bound of every wait below. */
const WAIT_MS = 240_000;
const until = (ready: () => boolean, what: string) => waitUntil(ready, what, WAIT_MS);

const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('entity-git watch, a Python sqlite3 writer in another process', () => {
  it('mirrors every turn exactly once across a killed writer and a stopped watch; the ids equal a fresh backfill', async () => {
    const db = join(dir, 'app.db');
    const root = join(dir, 'sessions');
    const watchArgs = [...COMMAND.slice(1), '--db', db, '--root', root, 'watch', '--interval', '20', '--json'];
    // The application creates its database (and the first turns) before entity-git is installed.
    const first = start('python3', [WRITER, db, String(SESSIONS), '2', '0']);
    expect(await first.exit).toBe(0);

    let watch = start(COMMAND[0]!, watchArgs);
    await until(() => watch.out.some((l) => l.includes('"watching"')), 'the watch to start');
    let writer = start('python3', [WRITER, db, String(SESSIONS), String(TURNS), '0.005']);
    await until(() => writer.out.length >= 20, 'the writer to commit 20 turns');
    writer.child.kill('SIGKILL');
    await writer.exit;

    // A clean stop mid-stream, then a new watch while the writer goes on.
    watch.child.kill('SIGTERM');
    expect(await watch.exit).toBe(0);
    expect(watch.out.at(-1)).toContain('"stopped"');
    writer = start('python3', [WRITER, db, String(SESSIONS), String(TURNS), '0.005']);
    await until(() => writer.out.length >= 10, 'the restarted writer to commit 10 turns');
    watch = start(COMMAND[0]!, watchArgs);
    expect(await writer.exit).toBe(0);
    expect(writer.out.at(-1)).toBe('done');

    // The reference: a fresh backfill of the final database into another root.
    const before = sha(db);
    const reference = join(dir, 'reference');
    const synced = await run(['--db', db, '--root', reference, 'sync']);
    expect(synced.code).toBe(0);
    expect(sha(db)).toBe(before); // a read command writes nothing to the application's database
    const expected = Object.fromEntries(
      Array.from({ length: SESSIONS }, (_, i) => `py-${i}`).map((id) => [id, revParseAll(join(reference, id))]),
    );

    await until(
      () =>
        Object.keys(expected).every((id) => {
          try {
            return git(join(root, id), 'rev-parse', 'refs/heads/main') === expected[id]!.main;
          } catch {
            return false;
          }
        }),
      'the watch to mirror the last turn',
    );
    watch.child.kill('SIGTERM');
    expect(await watch.exit).toBe(0);
    // A busy database is waited for or retried; no session may end failed, no index update either.
    expect(watch.err.join('')).not.toMatch(/failed to sync|search index/);
    for (const id of Object.keys(expected)) {
      const repo = join(root, id);
      expect(revParseAll(repo)).toEqual(expected[id]);
      // One commit per turn, each once.
      const commits = git(repo, 'rev-list', 'refs/heads/main').split('\n');
      expect(commits).toHaveLength(TURNS);
      expect(new Set(commits).size).toBe(TURNS);
      git(repo, 'fsck', '--strict');
      expect(git(repo, 'status', '--porcelain')).toBe('');
    }
    expect(sha(db)).toBe(before);
    // The search index the two watches kept, each on its write thread, holds what a rebuild from
    // the repositories holds.
    const live = new SearchIndex({ root, writeThread: false });
    const rebuilt = new SearchIndex({ root, file: join(dir, 'rebuilt.db'), writeThread: false });
    await rebuilt.reindex();
    expect(live.contents().messages).toHaveLength(SESSIONS * TURNS * 2);
    expect(live.contents()).toEqual(rebuilt.contents());
    live.close();
    rebuilt.close();
  }, 600_000);
});
