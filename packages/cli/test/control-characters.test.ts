// A session id another program stored with NUL in it (issue #26, item 7): refused with INVALID_ID
// by name (never "not found", never mirrored half), the other sessions synced, and nothing the CLI
// prints for people carries a control character raw.
import { join } from 'node:path';
import { openSqlite } from '@entity-git/sql';
import { describe, expect, it } from 'vitest';
import { PLAIN_ID, buildDb, run, tempDir } from './fixture.js';

const BAD = 'evil\u0000\u001b[31mred';
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('a session id holding control characters', () => {
  it('sync and verify report it as INVALID_ID, escaped (\\x00, \\x1b), and sync the others', async () => {
    const dir = tempDir();
    const db = join(dir, 'dag.db');
    await buildDb(db);
    const store = await openSqlite({ file: db });
    await store.db.insertInto('sessions').values({ id: BAD, created_at: 1779900000 }).execute();
    expect(await store.dag.listSessions()).toContain(BAD);
    await store.close();

    const root = join(dir, 'root');
    const sync = await run(['--db', db, '--root', root, 'sync']);
    expect(sync.code).toBe(1);
    expect(RAW.test(sync.stdout), sync.stdout).toBe(false);
    expect(RAW.test(sync.stderr), sync.stderr).toBe(false);
    expect(sync.stdout).toContain('evil\\x00\\x1b[31mred failed (INVALID_ID: ');
    expect(sync.stdout).toContain('synced 4 sessions: 3 backfilled, 1 failed');
    expect(sync.stderr).toBe('entity-git: 1 session failed to sync: evil\\x00\\x1b[31mred\n');

    const asJson = await run(['--db', db, '--root', root, 'sync', '--json']);
    const entry = JSON.parse(asJson.stdout).sessions.find((s: { sessionId: string }) => s.sessionId === BAD);
    expect(entry).toMatchObject({ action: 'failed', error: { code: 'INVALID_ID' } });
    expect(JSON.parse(asJson.stdout).sessions.find((s: { sessionId: string }) => s.sessionId === PLAIN_ID).action).toBe(
      'unchanged',
    );

    const verify = await run(['--db', db, '--root', root, 'verify']);
    expect(verify.code).toBe(1);
    expect(RAW.test(verify.stdout + verify.stderr), verify.stdout + verify.stderr).toBe(false);
    expect(verify.stdout).toContain('DIFFERS evil\\x00\\x1b[31mred');
  }, 300_000);
});
