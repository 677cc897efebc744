// Several `entity-git sync` processes at once while a writer process grows every session (issue
// #26, item 2): no run may report a session failed — a session another process is syncing, or
// whose DAG grows while it is checked, is never corrupt — and the end state equals an undisturbed
// backfill of the same rows.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { openSqlite } from '@entity-git/sqlite';
import { describe, expect, it } from 'vitest';
import { CLI_DIR, REPO_ROOT, git, revParseAll, run, tempDir, type Run } from './fixture.js';
import { builtChild } from '@entity-git/test-utils/node-child';

const SYNCERS = 3;
const SESSIONS = ['grow-a', 'grow-b', 'grow-c', 'grow-d'];
const ROUNDS = 24;
/** Each syncer stops after this many runs even if the writer is still going: bounded work. */
const MAX_RUNS = 60;

function writer(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [builtChild(join(CLI_DIR, 'test', 'grow-writer-child.ts')), file, SESSIONS.join(','), String(ROUNDS)],
      {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`writer exited ${code}: ${err}`))));
  });
}

describe('concurrent `entity-git sync` processes while the DAG grows', () => {
  it(`${SYNCERS} syncers × ${SESSIONS.length} growing sessions: no run reports a session failed, and the end state equals an undisturbed backfill`, async () => {
    const dir = tempDir();
    const db = join(dir, 'dag.db');
    const root = join(dir, 'root');
    const store = await openSqlite({ file: db });
    for (const s of SESSIONS) {
      await store.writer.createSession({ id: s, title: s, created_at: 1779800000 });
      await store.writer.appendNode({
        id: `${s}-u0`,
        session_id: s,
        role: 'user',
        content: `first question of ${s}`,
        created_at: 1779800001,
      });
      await store.writer.appendNode({
        id: `${s}-a0`,
        session_id: s,
        role: 'assistant',
        content: `first answer of ${s}`,
        predecessor: `${s}-u0`,
        created_at: 1779800002,
      });
      await store.writer.setHead(s, `${s}-a0`);
    }
    await store.close();

    let writing = true;
    const written = writer(db).finally(() => (writing = false));
    const runs: Run[] = [];
    const syncer = async (): Promise<void> => {
      // Until the writer is done, then once more: every syncer's last run sees every row.
      for (let n = 0; n < MAX_RUNS; n++) {
        const last = !writing;
        runs.push(await run(['--db', db, '--root', root, 'sync', '--json']));
        if (last) return;
      }
    };
    await Promise.all([written, ...Array.from({ length: SYNCERS }, syncer)]);

    const failures = runs.filter(
      (r) => r.code !== 0 || JSON.parse(r.stdout).sessions.some((e: { action: string }) => e.action === 'failed'),
    );
    expect(failures.map((r) => `${r.code}: ${r.stdout} ${r.stderr}`)).toEqual([]);
    expect(runs.length).toBeGreaterThan(SYNCERS);

    // The end state: every ref as an undisturbed backfill of the same rows writes it; native git agrees.
    const fresh = join(dir, 'fresh');
    expect((await run(['--db', db, '--root', fresh, 'sync'])).code).toBe(0);
    for (const s of SESSIONS) {
      expect(revParseAll(join(root, s)), s).toEqual(revParseAll(join(fresh, s)));
      expect(Object.keys(revParseAll(join(root, s))).length).toBe(2 + ROUNDS / 4);
      expect(git(join(root, s), 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(join(root, s), 'status', '--porcelain')).toBe('');
    }
    const verify = await run(['--db', db, '--root', root, 'verify']);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  }, 900_000);
});
