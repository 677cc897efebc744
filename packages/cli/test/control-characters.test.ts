// A session id another program stored with NUL and ESC in it, with a node id likewise: SQLite's
// text holds them, so the session is mirrored like the others, under its escaped directory name,
// and nothing the CLI prints for people carries a control character raw.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { openSqlite } from '@entity-git/sqlite';
import { describe, expect, it } from 'vitest';
import { PLAIN_ID, buildDb, run, tempDir } from './fixture.js';

const BAD = 'evil\u0000\u001b[31mred';
const BAD_NODE = 'u\u0000\u001b[2J';
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('a session id holding control characters', () => {
  it('is synced and verified, printed escaped (\\x00, \\x1b), its repository named %00%1B', async () => {
    const dir = tempDir();
    const db = join(dir, 'dag.db');
    await buildDb(db);
    const store = await openSqlite({ file: db });
    await store.db.insertInto('sessions').values({ id: BAD, created_at: 1779900000 }).execute();
    await store.db
      .insertInto('nodes')
      .values({ id: BAD_NODE, session_id: BAD, seq: 1, role: 'user', content: '"hi"', created_at: 1779900001 })
      .execute();
    expect(await store.dag.listSessions()).toContain(BAD);
    await store.close();

    const root = join(dir, 'root');
    const sync = await run(['--db', db, '--root', root, 'sync']);
    expect(sync.code, sync.stderr).toBe(0);
    expect(RAW.test(sync.stdout), sync.stdout).toBe(false);
    expect(sync.stdout).toContain('evil\\x00\\x1b[31mred backfilled\n');
    expect(sync.stdout).toContain('synced 4 sessions: 4 backfilled, 0 failed');
    expect(sync.stderr).toBe('');
    expect(readdirSync(root)).toContain('evil%00%1B%5B31mred');
    const repo = join(root, 'evil%00%1B%5B31mred');
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' });
    expect(git('fsck', '--strict', '--no-dangling')).toBe('');
    expect(git('ls-files')).toBe('messages/000001-u-u%00%1B%5B2J.json\nmeta.json\n');

    const asJson = await run(['--db', db, '--root', root, 'sync', '--json']);
    const sessions: { sessionId: string; action: string }[] = JSON.parse(asJson.stdout).sessions;
    expect(sessions.find((s) => s.sessionId === BAD)).toMatchObject({ action: 'unchanged', error: null });
    expect(sessions.find((s) => s.sessionId === PLAIN_ID)!.action).toBe('unchanged');

    const verify = await run(['--db', db, '--root', root, 'verify']);
    expect(verify.code).toBe(0);
    expect(RAW.test(verify.stdout + verify.stderr), verify.stdout + verify.stderr).toBe(false);
    expect(verify.stdout).toContain('ok      evil\\x00\\x1b[31mred\n');
  }, 300_000);
});
