// The server's default project git: shadow mode. A message in a project bound to a session leaves
// the project's own repository as it was (no agent commit), and the turn's files are in the
// private shadow repository under the server's root, as native git reads them.
import { closeShadowWatchers, ShadowProjectGit, ShadowRepository, turnRef } from '@entity-git/project/node';
import { openSqlite, type SqlStore } from '@entity-git/sqlite';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createServer,
  echoAgent,
  ECHO_NOTES_FILE,
  NOTES_SESSION,
  seedDemo,
  type EntityGitServer,
} from '../src/index.js';
import { connect, type Client } from './ws-client.js';

const TOKEN = 'test-token-0123456789abcdef-xyz';
let dir = '';
let store: SqlStore;
let server: EntityGitServer;
let client: Client;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'eg-ws-shadow-'));
  store = await openSqlite({ file: join(dir, 'dag.db') });
  await seedDemo(store);
  server = await createServer({
    db: store,
    root: join(dir, 'sessions'),
    port: 0,
    token: TOKEN,
    agent: echoAgent,
    projectLocks: join(dir, 'locks'),
  });
  client = await connect(`${server.wsUrl}?token=${TOKEN}`, { origin: server.url });
});

afterAll(async () => {
  await client?.close();
  await server?.close();
  await store?.close();
  closeShadowWatchers();
  rmSync(dir, { recursive: true, force: true });
});

describe('the default project git', () => {
  it('is shadow mode: no agent commit in the project, the turn snapshotted in the shadow repository', async () => {
    const workdir = join(dir, 'work');
    mkdirSync(workdir);
    const git = (...args: string[]) => execFileSync('git', args, { cwd: workdir, encoding: 'utf8' });
    git('init', '-q', '-b', 'main');
    git('-c', 'user.name=Ada', '-c', 'user.email=ada@example.com', 'commit', '-q', '--allow-empty', '-m', 'first');
    const project = await client.call('create_project', { name: 'Shadow', workdir, session_id: NOTES_SESSION });
    const r = await client.call('send_message', { session_id: NOTES_SESSION, content: 'Note the lexer tokens' });
    expect(r.project).toMatchObject({ status: 'skipped', reason: 'shadow-mode', project_id: project.id });
    // The project's own history is as it was; the agent's file is there, uncommitted.
    expect(git('log', '--format=%s')).toBe('first\n');
    expect(git('status', '--porcelain')).toBe(`?? ${ECHO_NOTES_FILE}\n`);

    const shadowRoot = join(dir, 'sessions', '.shadow');
    const repo = await ShadowRepository.open({ root: shadowRoot, workdir, watch: false });
    const shadow = (...args: string[]) => git(`--git-dir=${join(repo.dir, 'git')}`, ...args);
    const refs = shadow('for-each-ref', '--format=%(refname)', 'refs/turns/').trim().split('\n');
    const turn = Number(refs[0]!.split('/')[3]);
    expect(refs).toEqual([turnRef(NOTES_SESSION, turn, 'after'), turnRef(NOTES_SESSION, turn, 'before')]);
    expect(shadow('show', `${turnRef(NOTES_SESSION, turn, 'after')}:${ECHO_NOTES_FILE}`)).toBe(
      readFileSync(join(workdir, ECHO_NOTES_FILE), 'utf8'),
    );
    const files = await new ShadowProjectGit({ root: shadowRoot }).listTurnFiles({
      workdir,
      sessionId: NOTES_SESSION,
      turn,
    });
    expect(files.files).toMatchObject([{ path: ECHO_NOTES_FILE, status: 'added', by: 'tools' }]);
    shadow('fsck', '--strict', '--no-progress');
  }, 120_000);
});
