import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { GOLDEN_SESSION } from '@entity-git/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { PLAIN_ID, SHORT_ID, buildDb, git, json, revParseAll, run, tempDir } from './fixture.js';

const SID = GOLDEN_SESSION.id;
const dir = tempDir();
const db = join(dir, 'dag.db');
const root = join(dir, 'sessions');
const eg = (...args: string[]) => run(['--db', db, '--root', root, ...args]);

function hashTree(path: string): string {
  const h = createHash('sha256');
  const walk = (p: string, rel: string) => {
    const st = lstatSync(p);
    h.update(`${rel}\0${st.mode}\0`);
    if (st.isSymbolicLink()) h.update(readlinkSync(p));
    else if (st.isDirectory()) for (const n of readdirSync(p).sort()) walk(join(p, n), `${rel}/${n}`);
    else h.update(readFileSync(p));
  };
  walk(path, '');
  return h.digest('hex');
}

const duOf = (flags: string[], path: string) =>
  Number(spawnSync('du', [...flags, path], { encoding: 'utf8' }).stdout.split('\t')[0]);

beforeAll(async () => {
  await buildDb(db);
  expect((await eg('sync')).code).toBe(0);
});

describe('entity-git stats', () => {
  it('gives tokens per turn and per branch, the session counting each node once', async () => {
    const s = json(await eg('stats', SID, '--json'));
    expect(s.sessionId).toBe(SID);
    expect(s.tokens).toBe(551);
    expect(s.cost).toBeNull();
    expect(s.recognised).toBeNull();
    expect(
      s.branches.map((b: { name: string; tokens: number; turns: { tokens: number | null }[] }) => [
        b.name,
        b.tokens,
        b.turns.map((t) => t.tokens),
      ]),
    ).toEqual([
      ['main', 510, [420, 90, null]],
      ['fork-u2e', 420, [420, null]],
      ['fork-u4', 420, [420, null]],
      ['retry-a4r', 511, [420, 91]],
    ]);
    const tips = revParseAll(join(root, SID));
    const retry = await eg('stats', SID, '--branch', 'retry-a4r');
    expect(retry).toEqual({
      code: 0,
      stdout: [
        `session ${SID}: 551 tokens`,
        '  retry-a4r: 511 tokens',
        `    turn 1  ${git(join(root, SID), 'rev-parse', 'retry-a4r~1').slice(0, 10)}  420 tokens`,
        `    turn 2  ${tips['retry-a4r']!.slice(0, 10)}  91 tokens`,
        '',
      ].join('\n'),
      stderr: '',
    });
    expect(await eg('stats', 'nope')).toMatchObject({ code: 2 });
    expect(await eg('stats', SID, '--branch', 'nope')).toMatchObject({ code: 2 });
  });
});

describe('entity-git du and prune', () => {
  it('follows the application: a deleted session is reported, archived to a bundle that clones back, then removed', async () => {
    const plain = join(root, PLAIN_ID);
    const branches = revParseAll(plain);
    // The application deletes a session: its rows go.
    const sql = new Database(db);
    sql.prepare('DELETE FROM nodes WHERE session_id = ?').run(PLAIN_ID);
    sql.prepare('DELETE FROM sessions WHERE id = ?').run(PLAIN_ID);
    sql.close();

    const du = json(await eg('du', '--json'));
    expect(du.sessions.map((s: { sessionId: string; inDag: boolean }) => [s.sessionId, s.inDag]).sort()).toEqual(
      [
        [SID, true],
        [PLAIN_ID, false],
        [SHORT_ID, true],
      ].sort(),
    );
    for (const s of du.sessions) {
      expect(s.bytes).toBe(duOf(['-sb'], s.dir));
      expect(s.disk).toBe(duOf(['-s', '-B1'], s.dir));
    }
    expect(du.total.sessions).toBe(3);
    expect(du.total.disk).toBe(du.sessions.reduce((t: number, s: { disk: number }) => t + s.disk, 0));
    const text = await eg('du');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`${PLAIN_ID}  (deleted from the database: entity-git prune removes it)\n`);
    expect(text.stdout).toMatch(/ total, 3 sessions under /);

    const before = hashTree(root);
    const dry = json(await eg('prune', '--dry-run', '--archive', join(dir, 'archive'), '--json'));
    expect(dry).toMatchObject({ dryRun: true, kept: 2, pruned: [{ sessionId: PLAIN_ID, dir: plain, archive: null }] });
    expect(hashTree(root)).toBe(before);
    expect(existsSync(join(dir, 'archive'))).toBe(false);

    const done = json(await eg('prune', '--archive', join(dir, 'archive'), '--json'));
    const bundle = join(dir, 'archive', `${PLAIN_ID}.bundle`);
    expect(done).toMatchObject({
      dryRun: false,
      archive: join(dir, 'archive'),
      kept: 2,
      pruned: [{ sessionId: PLAIN_ID, archive: bundle }],
      foreign: [],
    });
    expect(done.total.disk).toBe(done.pruned[0].disk);
    expect(existsSync(plain)).toBe(false);
    const clone = join(dir, 'restored');
    git(dir, 'clone', '-q', bundle, clone);
    const back: Record<string, string> = {};
    for (const line of git(clone, 'for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/remotes/origin')
      .split('\n')
      .filter((l) => !l.startsWith('origin/HEAD '))) {
      const [name, sha] = line.split(' ');
      back[name!.replace(/^origin\//, '')] = sha!;
    }
    const { HEAD, ...heads } = branches;
    expect(back).toEqual(heads);
    expect(git(clone, 'symbolic-ref', '--short', 'HEAD')).toBe(HEAD);

    expect(await eg('prune')).toEqual({
      code: 0,
      stdout: 'pruned 0 sessions the database no longer holds (0 B), kept 2\n',
      stderr: '',
    });
  });

  it('refuses to remove every repository when the database holds none of them', async () => {
    const empty = join(tempDir(), 'empty.db');
    await buildDb(empty);
    const emptied = new Database(empty);
    emptied.exec('DELETE FROM nodes; DELETE FROM sessions;');
    emptied.close();
    const hash = hashTree(root);
    const r = await run(['--db', empty, '--root', root, 'prune']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the DAG holds none of the 2 sessions');
    expect(hashTree(root)).toBe(hash);
  });
});
