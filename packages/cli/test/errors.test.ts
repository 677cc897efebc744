import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { GOLDEN_SESSION } from '@entity-git/test-utils';
import { PLAIN_ID, buildDb, json, run, tempDir, type Run } from './fixture.js';

const SID = GOLDEN_SESSION.id;
const dir = tempDir();
const db = join(dir, 'dag.db');
const root = join(dir, 'sessions');
const eg = (...args: string[]) => run(['--db', db, '--root', root, ...args]);
const usage = (stderr: string): Run => ({ code: 2, stdout: '', stderr: `entity-git: ${stderr}\n` });

beforeAll(async () => {
  await buildDb(db);
  expect((await eg('sync', '--session', SID)).code).toBe(0);
});

describe('bad input: one line on stderr, exit 2', () => {
  it('unknown session, bad sha or turn, unknown branch, a session not mirrored yet', async () => {
    const unknown = usage('no session "nope" in the database');
    const results = await Promise.all([
      eg('log', 'nope'),
      eg('show', 'nope'),
      eg('branches', 'nope', '--json'),
      eg('verify', '--session', 'nope'),
      eg('sync', '--session', 'nope', '--json'),
      eg('show', SID, 'zz'),
      eg('show', SID, 'abc'),
      eg('show', SID, 'abcd'),
      eg('show', SID, 'f'.repeat(40)),
      eg('show', SID, '3'),
      eg('show', SID, '0'),
      eg('show', SID, '12345'),
      eg('show', SID, '17a4c6', '--json'),
      eg('show', SID, '4b1c', '--branch', 'main', '--json'),
      eg('log', SID, '--branch', 'nope'),
      eg('show', SID, '1', '--branch', 'nope'),
      eg('log', PLAIN_ID),
    ]);
    expect(results).toEqual([
      unknown,
      unknown,
      unknown,
      unknown,
      unknown,
      usage('not a turn number or commit id: "zz" (give a turn number, or 4 to 40 hex digits)'),
      usage('not a turn number or commit id: "abc" (give a turn number, or 4 to 40 hex digits)'),
      usage(`no commit starting with abcd in session "${SID}"`),
      usage(`no commit ${'f'.repeat(40)} in session "${SID}"`),
      usage(`branch fork-u4 of session "${SID}" has turns 1..2, not 3`),
      usage(`branch fork-u4 of session "${SID}" has turns 1..2, not 0`),
      usage(`branch fork-u4 of session "${SID}" has turns 1..2, and no commit starts with 12345`),
      // fork-u4's tip is 17a4c695…: what is no turn number is tried as a prefix (a number too: 12345 above)
      {
        code: 0,
        stdout: expect.stringContaining('"commit": "17a4c695c75333ca3ac7710e31cd26d953bab6d6",\n  "turn": 2,'),
        stderr: '',
      },
      {
        code: 0,
        stdout: expect.stringMatching(
          /^\{\n {2}"sessionId": "golden-1",\n {2}"branch": "main",\n {2}"commit": "4b1cc3d267e0d1e614cf1f5670401133cff1ac7f",\n {2}"turn": 1,/,
        ),
        stderr: '',
      },
      usage(`session "${SID}" has no branch "nope" (branches: main, fork-u2e, fork-u4, retry-a4r)`),
      usage(`session "${SID}" has no branch "nope" (branches: main, fork-u2e, fork-u4, retry-a4r)`),
      usage(`session "${PLAIN_ID}" has no repository under ${root} yet (run: entity-git sync --session ${PLAIN_ID})`),
    ]);
  });

  it('a missing database file is an error, and is not created', async () => {
    const missing = join(dir, 'nowhere', 'missing.db');
    const home = join(dir, 'home');
    mkdirSync(home);
    const [given, byDefault] = await Promise.all([
      run(['--db', missing, 'verify']),
      run(['log', SID], { env: { HOME: home } }),
    ]);
    expect(given).toEqual(usage(`no database at ${missing}`));
    expect(byDefault).toEqual(
      usage(
        `no database at ${join(home, '.openprogram', 'entity-git.db')} (the default; pass --db PATH or --db postgres://URL)`,
      ),
    );
    expect(existsSync(missing)).toBe(false);
    expect(existsSync(join(home, '.openprogram'))).toBe(false);
  });

  it('a relative --db is taken from the current directory', async () => {
    const r = await run(['--db', 'dag.db', '--root', 'sessions', 'branches', SID, '--json'], { cwd: dir });
    expect(json(r).head).toBe('fork-u4');
  });

  it('a database that cannot be opened is a storage error (exit 3)', async () => {
    const garbage = join(dir, 'garbage.db');
    writeFileSync(garbage, 'this is not a SQLite database, not even close; '.repeat(20));
    const [sqlite, postgres] = await Promise.all([
      run(['--db', garbage, 'verify']),
      run(['--db', 'postgres://nobody@127.0.0.1:1/none', 'verify']),
    ]);
    expect(sqlite.code).toBe(3);
    expect(sqlite.stdout).toBe('');
    expect(sqlite.stderr).toMatch(/^entity-git: .*not a database.* \(DB_ERROR\)\n$/);
    expect(postgres.code).toBe(3);
    expect(postgres.stderr).toMatch(/^entity-git: .*ECONNREFUSED.* \(DB_ERROR\)\n$/);
  });

  it('usage errors and help from the real binary (the full matrix runs in-process in args.test.ts)', async () => {
    const [unknown, missing, help, version] = await Promise.all([
      run(['frob']),
      run(['show']),
      run(['sync', '--help']),
      run(['--version']),
    ]);
    expect(unknown).toEqual(usage('unknown command "frob" (see: entity-git --help)'));
    expect(missing).toEqual(usage('show: missing SESSION (see: entity-git show --help)'));
    expect([help.code, help.stderr]).toEqual([0, '']);
    expect(help.stdout).toMatch(
      /^Usage: entity-git sync \[--session ID\] \[--full\] \[--quiet-time T\] \[--dry-run\] \[--json\]\n/,
    );
    expect(version).toEqual({ code: 0, stdout: 'entity-git 0.1.0\n', stderr: '' });
  });
});

describe('entity-git projects', () => {
  it('create, list, add-session (by name or id), with the workdir checked', async () => {
    const work = join(dir, 'work');
    mkdirSync(work);
    const created = json(await eg('projects', 'create', 'demo', work, '--description', 'the demo', '--json'));
    expect(Object.keys(created.project)).toEqual([
      'id',
      'name',
      'workdir',
      'status',
      'description',
      'created_at',
      'sessions',
    ]);
    expect(created.project).toMatchObject({
      name: 'demo',
      workdir: work,
      status: 'active',
      description: 'the demo',
      sessions: [],
    });
    expect(created.project.id).toMatch(/^proj_[0-9a-f-]{36}$/);
    expect(typeof created.project.created_at).toBe('number');
    const id = created.project.id as string;

    const [relative, missing, notDir, duplicate, noProject, noSession] = await Promise.all([
      eg('projects', 'create', 'rel', 'work'),
      eg('projects', 'create', 'gone', join(dir, 'missing')),
      eg('projects', 'create', 'file', db),
      eg('projects', 'create', 'demo', work),
      eg('projects', 'add-session', 'nope', SID),
      eg('projects', 'add-session', 'demo', 'nope'),
    ]);
    expect([relative, missing, notDir, duplicate, noProject, noSession]).toEqual([
      usage('WORKDIR must be an absolute path, got "work" (try "$PWD/work")'),
      usage(`workdir "${join(dir, 'missing')}" does not exist`),
      usage(`workdir "${db}" is not a directory`),
      usage('a project named "demo" exists already'),
      usage('no project with id or name "nope"'),
      usage('no session "nope" in the database'),
    ]);

    const byName = json(await eg('projects', 'add-session', 'demo', SID, '--json'));
    expect(byName).toEqual({ project: { ...created.project, sessions: [SID] } });
    const byId = await eg('projects', 'add-session', id, PLAIN_ID);
    expect(byId).toEqual({ code: 0, stdout: `added session ${PLAIN_ID} to project ${id} "demo"\n`, stderr: '' });
    const [list, text] = await Promise.all([eg('projects', 'list', '--json'), eg('projects', 'list')]);
    expect(json(list)).toEqual({ projects: [{ ...created.project, sessions: [SID, PLAIN_ID] }] });
    expect(text.stdout).toBe(`${id}  demo  [active]  ${work}  2 sessions\n`);
  });
});
