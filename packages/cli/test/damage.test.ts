import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { GOLDEN_SESSION } from '@entity-git/test-utils';
import { PLAIN_ID, SHORT_ID, buildDb, git, json, revParseAll, run, tempDir } from './fixture.js';

const SID = GOLDEN_SESSION.id;
const dir = tempDir();
const db = join(dir, 'dag.db');
const fresh = join(dir, 'fresh');
const damaged = join(dir, 'damaged');
const eg = (root: string, ...args: string[]) => run(['--db', db, '--root', root, ...args]);
const sessions = [SID, PLAIN_ID, SHORT_ID];

/** The loose object files of a session repository's last commit: the commit, its trees, the blobs new in it. */
function lastCommitObjects(repo: string): string[] {
  const tip = git(repo, 'rev-parse', 'HEAD');
  const ids = [tip, git(repo, 'rev-parse', 'HEAD^{tree}'), git(repo, 'rev-parse', 'HEAD:messages')];
  for (const line of git(repo, 'diff-tree', '-r', '--no-commit-id', 'HEAD~1', 'HEAD').split('\n'))
    ids.push(line.split(' ')[3]!);
  return ids.map((id) => join(repo, '.git', 'objects', id.slice(0, 2), id.slice(2)));
}

let reference: Record<string, Record<string, string>>;

beforeAll(async () => {
  await buildDb(db);
  const [a, b] = await Promise.all([eg(fresh, 'sync'), eg(damaged, 'sync')]);
  expect([a.code, b.code]).toEqual([0, 0]);
  // A short backfill is one pack (issue 22): unpacked, so the last commit's objects are files to remove.
  const repo = join(damaged, PLAIN_ID);
  const packs = join(repo, '.git', 'objects', 'pack');
  for (const name of readdirSync(packs).filter((n) => n.endsWith('.pack'))) {
    const bytes = readFileSync(join(packs, name));
    for (const ext of ['.pack', '.idx']) rmSync(join(packs, name.replace(/\.pack$/, ext)));
    execFileSync('git', ['unpack-objects', '-q'], { cwd: repo, input: bytes });
  }
  reference = Object.fromEntries(sessions.map((s) => [s, revParseAll(join(fresh, s))]));
});

describe('sync repairs damaged repositories to the ids of a fresh backfill', () => {
  it('verify names each damage (exit 1), sync repairs it (exit 0), verify is clean after', async () => {
    expect(Object.fromEntries(sessions.map((s) => [s, revParseAll(join(damaged, s))]))).toEqual(reference);

    // 1. a deleted repository; 2. HEAD's ref truncated to 0 bytes, another half-written;
    // 3. the last commit's object files removed.
    rmSync(join(damaged, SHORT_ID), { recursive: true });
    truncateSync(join(damaged, SID, '.git', 'refs', 'heads', 'fork-u4'), 0);
    const half = reference[SID]!['retry-a4r']!.slice(0, 12);
    writeFileSync(join(damaged, SID, '.git', 'refs', 'heads', 'retry-a4r'), half);
    const removed = lastCommitObjects(join(damaged, PLAIN_ID));
    expect(removed).toHaveLength(7); // commit, root tree, messages tree, the four messages of turn 2
    for (const file of removed) rmSync(file);
    const tip = reference[PLAIN_ID]!.main!;

    const [before, beforeText, log] = await Promise.all([
      eg(damaged, 'verify', '--full', '--json'),
      eg(damaged, 'verify', '--full'),
      eg(damaged, 'log', PLAIN_ID),
    ]);
    expect(before.code).toBe(1);
    expect(before.stderr).toBe(
      `entity-git: 3 of 3 sessions differ from the DAG: ${SID}, ${PLAIN_ID}, ${SHORT_ID} (entity-git sync repairs them)\n`,
    );
    expect(JSON.parse(before.stdout)).toEqual({
      ok: false,
      sessions: [
        {
          sessionId: SID,
          ok: false,
          error: null,
          // In the order the mirror derives branches (the DAG's), not by name.
          differences: [
            {
              kind: 'corrupt',
              branch: 'retry-a4r',
              expected: null,
              actual: null,
              detail: `ref refs/heads/retry-a4r holds "${half}", not an object id`,
            },
            {
              kind: 'corrupt',
              branch: 'fork-u4',
              expected: null,
              actual: null,
              detail: 'ref refs/heads/fork-u4 holds "", not an object id',
            },
          ],
        },
        {
          sessionId: PLAIN_ID,
          ok: false,
          error: null,
          differences: [
            {
              kind: 'missing-object',
              branch: 'main',
              expected: null,
              actual: null,
              detail: `object ${tip} is not in the repository`,
            },
          ],
        },
        {
          sessionId: SHORT_ID,
          ok: false,
          error: null,
          differences: [
            {
              kind: 'missing-repo',
              branch: null,
              expected: null,
              actual: null,
              detail: `no repository at ${join(damaged, SHORT_ID)}`,
            },
          ],
        },
      ],
      recognised: null,
    });
    expect(beforeText.code).toBe(1);
    expect(beforeText.stdout).toBe(
      [
        `DIFFERS ${SID}`,
        `  corrupt [retry-a4r]: ref refs/heads/retry-a4r holds "${half}", not an object id`,
        '  corrupt [fork-u4]: ref refs/heads/fork-u4 holds "", not an object id',
        `DIFFERS ${PLAIN_ID}`,
        `  missing-object [main]: object ${tip} is not in the repository`,
        `DIFFERS ${SHORT_ID}`,
        `  missing-repo: no repository at ${join(damaged, SHORT_ID)}`,
        'verified 3 sessions: 0 ok, 3 differ',
        '',
      ].join('\n'),
    );
    // Reading a damaged repository is a storage error (3) that says how to repair it.
    expect(log).toEqual({
      code: 3,
      stdout: '',
      stderr: `entity-git: object ${tip} is not in the repository (OBJECT_NOT_FOUND; entity-git sync repairs the repository)\n`,
    });

    // --full: objects removed below intact refs are found by the full check only.
    const repair = await eg(damaged, 'sync', '--full');
    expect(repair).toEqual({
      code: 0,
      stdout: `1/3 ${SID} repaired (corrupt)\n2/3 ${PLAIN_ID} repaired (missing-object)\n3/3 ${SHORT_ID} backfilled\nsynced 3 sessions: 1 backfilled, 2 repaired, 0 failed\n`,
      stderr: '',
    });
    expect(Object.fromEntries(sessions.map((s) => [s, revParseAll(join(damaged, s))]))).toEqual(reference);
    for (const s of sessions) {
      expect(git(join(damaged, s), 'fsck', '--strict', '--no-dangling')).toBe('');
      expect(git(join(damaged, s), 'status', '--porcelain')).toBe('');
    }
    const [after, again] = await Promise.all([eg(damaged, 'verify'), eg(damaged, 'sync', '--json')]);
    expect(after).toEqual({
      code: 0,
      stdout: `ok      ${SID}\nok      ${PLAIN_ID}\nok      ${SHORT_ID}\nverified 3 sessions: 3 ok, 0 differ\n`,
      stderr: '',
    });
    expect(json(again).counts).toEqual({ unchanged: 3, backfilled: 0, empty: 0, repaired: 0, busy: 0, failed: 0 });
  });

  it('a session that cannot be repaired fails the sync with exit 1 and says why', async () => {
    const root = join(dir, 'blocked');
    mkdirSync(root);
    // A file where the session's repository directory belongs: nothing can be written there.
    writeFileSync(join(root, SHORT_ID), 'not a directory');
    const [plain, asJson] = await Promise.all([
      eg(root, 'sync'),
      eg(join(dir, 'blocked-json'), 'sync', '--json', '--session', PLAIN_ID),
    ]);
    expect(plain.code).toBe(1);
    const lines = plain.stdout.split('\n');
    expect(lines.slice(0, 2)).toEqual([`1/3 ${SID} backfilled`, `2/3 ${PLAIN_ID} backfilled`]);
    expect(lines[2]).toMatch(new RegExp(`^3/3 ${SHORT_ID} failed \\((STORAGE_ERROR|REPO_CORRUPT): .+\\)$`));
    expect(lines.slice(3)).toEqual(['synced 3 sessions: 2 backfilled, 1 failed', '']);
    expect(plain.stderr).toBe(`entity-git: 1 session failed to sync: ${SHORT_ID}\n`);
    expect(json(asJson)).toEqual({
      ok: true,
      total: 1,
      counts: { unchanged: 0, backfilled: 1, empty: 0, repaired: 0, busy: 0, failed: 0 },
      sessions: [
        {
          sessionId: PLAIN_ID,
          action: 'backfilled',
          differences: [
            {
              kind: 'missing-repo',
              branch: null,
              expected: null,
              actual: null,
              detail: `no repository at ${join(dir, 'blocked-json', PLAIN_ID)}`,
            },
          ],
          error: null,
        },
      ],
      recognised: null,
    });
  });
});
