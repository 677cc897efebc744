// Every action and every typed error over a real WebSocket, the refusals (origin, token, path),
// and the HTTP side (health, static files, traversal). One server for the file: the actions that
// write run in the order a user would (switch, fork, projects).
import { MemoryDag, UNCOMMITTED_CHANGES_WARNING, type DagNode } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { openSqlite, type SqlStore } from '@entity-git/sqlite';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createServer,
  DEMO_SESSION,
  ECHO_NOTES_FILE,
  echoAgent,
  NOTES_SESSION,
  seedDemo,
  type EntityGitServer,
} from '../src/index.js';
import { connect, open, type Client } from './ws-client.js';

const TOKEN = 'test-token-0123456789';
let dir = '';
let store: SqlStore;
let server: EntityGitServer;
let client: Client;
let wsUrl = '';

const code = async (c: Client, action: string, params?: unknown) => {
  const r = await c.request(action, params);
  return r.ok ? 'ok' : r.error.code;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'eg-ws-'));
  mkdirSync(join(dir, 'app'));
  writeFileSync(join(dir, 'app', 'index.html'), '<!doctype html><title>app</title>');
  writeFileSync(join(dir, 'secret.txt'), 'outside the app');
  store = await openSqlite({ file: join(dir, 'dag.db') });
  await seedDemo(store);
  server = await createServer({
    db: store,
    root: join(dir, 'sessions'),
    port: 0,
    token: TOKEN,
    staticDir: join(dir, 'app'),
    agent: echoAgent,
    projectLocks: join(dir, 'locks'),
  });
  wsUrl = `${server.wsUrl}?token=${TOKEN}`;
  client = await connect(wsUrl, { origin: server.url });
});

afterAll(async () => {
  await client?.close();
  await server?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the upgrade', () => {
  it('is bound to 127.0.0.1 and backfilled every session before listening', () => {
    expect(server.host).toBe('127.0.0.1');
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.reconciled?.entries.map((e) => [e.sessionId, e.action])).toEqual([
      [DEMO_SESSION, 'backfilled'],
      [NOTES_SESSION, 'backfilled'],
    ]);
    expect(server.origins).toEqual([`http://127.0.0.1:${server.port}`, `http://localhost:${server.port}`]);
  });

  it('refuses a missing or wrong token with 401', async () => {
    expect(await open(server.wsUrl, { origin: server.url })).toEqual({ ok: false, status: 401 });
    expect(await open(`${server.wsUrl}?token=nope`, { origin: server.url })).toEqual({ ok: false, status: 401 });
    expect(await open(`${server.wsUrl}?token=${TOKEN}x`)).toEqual({ ok: false, status: 401 });
    expect(await open(`${server.wsUrl}?token=${TOKEN.slice(0, -1)}`)).toEqual({ ok: false, status: 401 });
  });

  it('refuses an Origin not on the list with 403, even with the right token', async () => {
    expect(await open(wsUrl, { origin: 'http://evil.example' })).toEqual({ ok: false, status: 403 });
    expect(await open(wsUrl, { origin: `http://127.0.0.1:${server.port + 1}` })).toEqual({ ok: false, status: 403 });
    expect(await open(wsUrl, { origin: 'null' })).toEqual({ ok: false, status: 403 });
  });

  it('accepts the allowed origins, and a client that sends no Origin (not a browser) with the token', async () => {
    for (const origin of [`http://localhost:${server.port}`, undefined]) {
      const c = await connect(wsUrl, origin === undefined ? {} : { origin });
      expect(await code(c, 'server_info')).toBe('ok');
      await c.close();
    }
  });

  it('refuses another path with 404', async () => {
    expect(await open(`ws://127.0.0.1:${server.port}/other?token=${TOKEN}`)).toEqual({ ok: false, status: 404 });
  });

  it('takes an explicit origin list instead of the default', async () => {
    const other = await createServer({
      db: store,
      root: join(dir, 'sessions'),
      port: 0,
      token: TOKEN,
      origins: ['http://app.localhost:5173'],
      reconcile: false,
    });
    try {
      const url = `${other.wsUrl}?token=${TOKEN}`;
      expect(await open(url, { origin: other.url })).toEqual({ ok: false, status: 403 });
      const c = await connect(url, { origin: 'http://app.localhost:5173' });
      await c.close();
    } finally {
      await other.close();
    }
  });

  it('closes the socket with 1009 on a frame over maxPayload', async () => {
    const c = await connect(wsUrl);
    void c
      .raw(JSON.stringify({ action: 'server_info', params: { pad: 'x'.repeat(1024 * 1024) } }))
      .catch(() => undefined);
    expect((await c.closed).code).toBe(1009);
  });
});

describe('HTTP', () => {
  it('answers /healthz, serves the app, refuses traversal and other methods', async () => {
    const health = await fetch(`${server.url}/healthz`);
    expect(await health.json()).toEqual({ ok: true, name: 'entity-git ws-server' });
    const page = await fetch(`${server.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await page.text()).toContain('<title>app</title>');
    for (const path of ['/../secret.txt', '/%2e%2e/secret.txt', '/..%2fsecret.txt', '/missing.js', '/%00']) {
      expect([400, 404]).toContain((await fetch(`${server.url}${path}`)).status);
    }
    expect((await fetch(`${server.url}/`, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${server.url}/ws`)).status).toBe(426);
  });
});

describe('the actions', () => {
  it('server_info lists every action', async () => {
    const info = await client.call('server_info', {});
    expect(info.agent).toBe(true);
    expect(info.actions).toEqual([
      'add_session_to_project',
      'create_project',
      'export_session',
      'git_branches',
      'git_checkout',
      'git_history',
      'git_session_checkout',
      'git_session_log',
      'git_switch_branch',
      'import_projects',
      'list_projects',
      'list_sessions',
      'project_detail',
      'project_log',
      'project_status',
      'send_message',
      'server_info',
      'set_project_status',
      'turn_messages',
    ]);
  });

  it('list_sessions', async () => {
    const { sessions } = await client.call('list_sessions', {});
    expect(sessions.map((s) => [s.id, s.title, s.branch, s.turns, s.project_id])).toEqual([
      [DEMO_SESSION, 'Fix the parser TODOs', 'main', 5, null],
      [NOTES_SESSION, 'Lexer notes', 'main', 2, null],
    ]);
  });

  it('git_history and git_session_log: one commit per turn, newest first, on HEAD or a named branch', async () => {
    const h = await client.call('git_history', { session_id: DEMO_SESSION });
    expect(h.branch).toBe('main');
    expect(h.commits.map((c) => c.turn)).toEqual([5, 4, 3, 2, 1]);
    expect(h.commits.map((c) => c.subject)).toEqual([
      'turn 5: Write a changelog entry',
      'turn 4: Run the tests',
      'turn 3: Fix the TODO in parser.ts',
      'turn 2: Find every TODO',
      'turn 1: What is in src/?',
    ]);
    expect(h.commits.at(-1)!.parents).toEqual([]);
    expect(await client.call('git_session_log', { session_id: DEMO_SESSION })).toEqual(h);
    const retry = await client.call('git_history', { session_id: DEMO_SESSION, branch: 'retry-d-a3r' });
    expect(retry.commits.map((c) => c.turn)).toEqual([3, 2, 1]);
    expect(retry.commits.slice(1)).toEqual(h.commits.slice(3));
    expect(retry.commits[0]!.node).toBe('d-a3r');
  });

  it('git_checkout and git_session_checkout: the conversation at a commit, turn N / M, prev and next', async () => {
    const h = await client.call('git_history', { session_id: DEMO_SESSION });
    const first = h.commits.at(-1)!;
    const v = await client.call('git_checkout', { session_id: DEMO_SESSION, commit_sha: first.sha });
    expect([v.turn, v.turns, v.branch, v.prev, v.next]).toEqual([1, 5, 'main', null, h.commits.at(-2)!.sha]);
    expect(v.messages.map((m) => m.id)).toEqual(['d-s1', 'd-u1', 'd-a1', 'd-t1', 'd-a1b']);
    expect(v.continue_from).toBe('d-a1b');
    expect((v.meta as { id: string }).id).toBe(DEMO_SESSION);
    expect(await client.call('git_session_checkout', { session_id: DEMO_SESSION, commit_sha: first.sha })).toEqual(v);
    const tip = await client.call('git_checkout', { session_id: DEMO_SESSION, commit_sha: h.commits[0]!.sha });
    expect([tip.turn, tip.turns, tip.next, tip.prev]).toEqual([5, 5, null, h.commits[1]!.sha]);
    // The same shared commit, walked on the retry branch: "turn 2 / 3".
    const onRetry = await client.call('git_checkout', {
      session_id: DEMO_SESSION,
      commit_sha: h.commits[3]!.sha,
      branch: 'retry-d-a3r',
    });
    expect([onRetry.turn, onRetry.turns, onRetry.branch]).toEqual([2, 3, 'retry-d-a3r']);
  });

  it('git_branches, and export_session pages the rows that rebuild the very same commit ids', async () => {
    const { branches } = await client.call('git_branches', { session_id: DEMO_SESSION });
    expect(branches.map((b) => [b.name, b.turns, b.head])).toEqual([
      ['main', 5, true],
      ['retry-d-a3r', 3, false],
    ]);

    const nodes: DagNode[] = [];
    let after = 0;
    let pages = 0;
    let first: Awaited<ReturnType<typeof client.call<'export_session'>>> | null = null;
    for (;;) {
      const page = await client.call('export_session', { session_id: DEMO_SESSION, after_seq: after, limit: 8 });
      first ??= page;
      pages++;
      nodes.push(...page.nodes);
      if (page.next_after_seq === null) break;
      after = page.next_after_seq;
    }
    expect(pages).toBe(3);
    expect(nodes.map((n) => n.seq)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    expect(first!.session).toMatchObject({ id: DEMO_SESSION, head: 'd-a5', title: 'Fix the parser TODOs' });
    expect(first!.branches).toEqual(branches);

    // Rebuilt elsewhere from the exported rows alone: the same commits.
    const copy = new MemoryDag();
    await copy.createSession({ ...first!.session, head: null });
    for (const n of nodes) await copy.addNode(n);
    await copy.setHead(DEMO_SESSION, first!.session.head);
    const root = mkdtempSync(join(tmpdir(), 'eg-ws-copy-'));
    try {
      const mirror = createNodeMirror({ dag: copy, root });
      await mirror.sync(DEMO_SESSION);
      expect(
        (await mirror.branches(DEMO_SESSION)).map((b) => ({
          name: b.name,
          commit: b.commit,
          turns: b.turns,
          head: b.head,
        })),
      ).toEqual(branches);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('git_switch_branch moves the DAG head and HEAD, and back', async () => {
    const r = await client.call('git_switch_branch', { session_id: DEMO_SESSION, branch: 'retry-d-a3r' });
    expect(r.head_node).toBe('d-a3r');
    expect(r.branches.find((b) => b.head)!.name).toBe('retry-d-a3r');
    expect(await store.dag.getHead(DEMO_SESSION)).toBe('d-a3r');
    expect(
      execFileSync('git', ['symbolic-ref', 'HEAD'], {
        cwd: server.mirror.repoPath(DEMO_SESSION),
        encoding: 'utf8',
      }).trim(),
    ).toBe('refs/heads/retry-d-a3r');
    const back = await client.call('git_switch_branch', { session_id: DEMO_SESSION, branch: 'main' });
    expect(back.head_node).toBe('d-a5');
  });

  it('send_message from an old turn forks: a user node on the viewed turn, the echo reply, a new branch at HEAD', async () => {
    const h = await client.call('git_history', { session_id: DEMO_SESSION });
    const turn2 = await client.call('git_checkout', { session_id: DEMO_SESSION, commit_sha: h.commits[3]!.sha });
    const r = await client.call('send_message', {
      session_id: DEMO_SESSION,
      content: 'Only list the TODOs in tests',
      continue_from: turn2.continue_from,
    });
    expect(r.node).toMatchObject({
      role: 'user',
      predecessor: 'd-a2b',
      content: 'Only list the TODOs in tests',
      seq: 22,
    });
    expect(r.reply).toMatchObject({ role: 'assistant', predecessor: r.node.id, seq: 23 });
    expect(String(r.reply!.content)).toContain('Only list the TODOs in tests');
    expect([r.branch, r.branch_created, r.synced, r.project]).toEqual([`fork-${r.node.id}`, true, true, null]);
    expect(r.branches.map((b) => [b.name, b.turns, b.head])).toEqual([
      ['main', 5, false],
      [`fork-${r.node.id}`, 3, true],
      ['retry-d-a3r', 3, false],
    ]);
    const view = await client.call('git_checkout', { session_id: DEMO_SESSION, commit_sha: r.commit! });
    expect([view.turn, view.turns, view.branch]).toEqual([3, 3, r.branch]);
    expect(view.messages.slice(-2).map((m) => m.id)).toEqual([r.node.id, r.reply!.id]);
    expect(await store.dag.getHead(DEMO_SESSION)).toBe(r.reply!.id);

    // From the tip it continues the branch; without continue_from, from HEAD's tip.
    const more = await client.call('send_message', { session_id: DEMO_SESSION, content: 'Thanks' });
    expect(more.node.predecessor).toBe(r.reply!.id);
    expect([more.branch, more.branch_created]).toEqual([r.branch, false]);
    expect(more.branches.find((b) => b.head)!.turns).toBe(4);
    await client.call('git_switch_branch', { session_id: DEMO_SESSION, branch: 'main' });
  });

  it('projects: create (git init or reuse), list, detail, add a session, the project log', async () => {
    expect(await client.call('list_projects', {})).toEqual({ projects: [] });
    const plain = join(dir, 'work-plain');
    const existing = join(dir, 'work-repo');
    mkdirSync(plain);
    mkdirSync(existing);
    execFileSync('git', ['init', '-q'], { cwd: existing });
    execFileSync(
      'git',
      [
        '-c',
        'user.name=Ada',
        '-c',
        'user.email=ada@example.com',
        'commit',
        '-q',
        '--allow-empty',
        '-m',
        'first commit',
      ],
      { cwd: existing },
    );

    const a = await client.call('create_project', { name: 'Parser work', workdir: plain, session_id: NOTES_SESSION });
    expect(a).toMatchObject({
      name: 'Parser work',
      workdir: plain,
      status: 'active',
      sessions: [NOTES_SESSION],
      sessions_count: 1,
      repo: 'created',
    });
    expect(execFileSync('git', ['rev-parse', '--is-inside-work-tree'], { cwd: plain, encoding: 'utf8' }).trim()).toBe(
      'true',
    );
    const b = await client.call('create_project', { name: 'Docs', workdir: existing, description: 'the docs repo' });
    expect(b).toMatchObject({ repo: 'reused', sessions_count: 0, description: 'the docs repo' });

    const { projects } = await client.call('list_projects', {});
    expect(projects.map((p) => [p.name, p.sessions_count, p.status])).toEqual([
      ['Parser work', 1, 'active'],
      ['Docs', 0, 'active'],
    ]);
    const added = await client.call('add_session_to_project', { project_id: b.id, session_id: NOTES_SESSION });
    expect(added.sessions).toEqual([NOTES_SESSION]);
    const detail = await client.call('project_detail', { project_id: b.id });
    expect(detail.session_details.map((s) => [s.id, s.project_id, s.turns])).toEqual([[NOTES_SESSION, b.id, 2]]);
    expect((await client.call('project_detail', { project_id: a.id })).sessions_count).toBe(0);
    // The server synced after the write. meta.json holds the immutable fields only, so no commit
    // changed; the project is on the meta ref, which the sync moved.
    expect((await store.dag.getSession(NOTES_SESSION))!.project_id).toBe(b.id);
    const meta = JSON.parse(readFileSync(join(server.mirror.repoPath(NOTES_SESSION), 'meta.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(Object.keys(meta)).toEqual(['created_at', 'id']);
    const row = JSON.parse(
      execFileSync('git', ['show', 'refs/entity-git/meta:session.json'], {
        cwd: server.mirror.repoPath(NOTES_SESSION),
        encoding: 'utf8',
      }),
    ) as { project_id: string | null };
    expect(row.project_id).toBe(b.id);
    const report = await server.mirror.verify(NOTES_SESSION);
    expect([report.ok, report.differences.map((d) => d.kind)]).toEqual([true, []]);

    const log = await client.call('project_log', { project_id: b.id });
    expect(log).toMatchObject({ project_id: b.id, workdir: existing, repo: true });
    expect(log.commits.map((c) => [c.subject, c.author, c.agent])).toEqual([['first commit', 'Ada', false]]);
    expect(await client.call('project_log', { project_id: a.id, limit: 5 })).toMatchObject({ repo: true, commits: [] });
  });

  it('send_message in a project: a clean workdir gets one agent commit; a user edit skips it with the warning, the workdir untouched', async () => {
    const docs = (await client.call('list_projects', {})).projects.find((p) => p.name === 'Docs')!;
    const workdir = docs.workdir;
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: workdir, encoding: 'utf8', env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } });
    const sha1 = (file: string) => createHash('sha1').update(readFileSync(file)).digest('hex');
    // A second socket sees the pushed outcome (a frame with `event`, no `id`).
    const watcher = await connect(wsUrl, { origin: server.url });
    try {
      // (a) a clean workdir: the echo agent writes agent-notes.md, the turn commits it.
      expect(git('status', '--porcelain')).toBe('');
      const r = await client.call('send_message', {
        session_id: NOTES_SESSION,
        content: 'Write   down the lexer tokens',
      });
      expect(r.synced).toBe(true);
      expect(String(r.reply!.content)).toContain(`I noted it in ${ECHO_NOTES_FILE}`);
      expect(r.project).toMatchObject({
        status: 'committed',
        project_id: docs.id,
        paths: [ECHO_NOTES_FILE],
        deferred: [],
      });
      const sessionTip = execFileSync('git', ['rev-parse', 'HEAD'], {
        cwd: server.mirror.repoPath(NOTES_SESSION),
        encoding: 'utf8',
      }).trim();
      expect(git('log', '--format=%s|%cn|%an')).toBe(
        `[agent ${NOTES_SESSION}] turn 3: Write down the lexer tokens|agent (claude-sonnet-4.7 via OpenProgram)|agent (claude-sonnet-4.7 via OpenProgram)\nfirst commit|Ada|Ada\n`,
      );
      expect(git('log', '-1', '--format=%B')).toContain(`Session-Commit: ${sessionTip}`);
      expect(r.project!.status === 'committed' && r.project!.commit).toMatchObject({
        sha: git('rev-parse', 'HEAD').trim(),
        subject: `[agent ${NOTES_SESSION}] turn 3: Write down the lexer tokens`,
        agent: true,
      });
      expect(git('show', '--name-only', '--format=', 'HEAD').trim()).toBe(ECHO_NOTES_FILE);
      expect(git('status', '--porcelain')).toBe('');
      expect(await client.call('project_status', { project_id: docs.id })).toMatchObject({
        dirty: false,
        user_paths: [],
        user_paths_count: 0,
        warning: null,
      });
      const log = await client.call('project_log', { project_id: docs.id });
      expect(log.commits.map((c) => [c.subject, c.agent])).toEqual([
        [`[agent ${NOTES_SESSION}] turn 3: Write down the lexer tokens`, true],
        ['first commit', false],
      ]);

      // (b) the user edits a file: the turn is not committed, the warning comes back, and nothing of theirs moved.
      writeFileSync(join(workdir, 'TODO.md'), "my own notes, not the agent's\n");
      const before = {
        head: git('rev-parse', 'HEAD'),
        index: sha1(join(workdir, '.git/index')),
        todo: sha1(join(workdir, 'TODO.md')),
      };
      // project_status reads it before any turn (and writes nothing: `before` is checked below).
      expect(await client.call('project_status', { project_id: docs.id })).toEqual({
        project_id: docs.id,
        workdir,
        status: 'active',
        state: 'repository',
        dirty: true,
        user_paths: ['TODO.md'],
        user_paths_count: 1,
        warning: UNCOMMITTED_CHANGES_WARNING,
      });
      const pushed = watcher.next();
      const s2 = await client.call('send_message', { session_id: NOTES_SESSION, content: 'And the unicode TODO' });
      expect(s2.project).toEqual({
        status: 'skipped',
        project_id: docs.id,
        reason: 'uncommitted-changes',
        warning: UNCOMMITTED_CHANGES_WARNING,
        user_paths: ['TODO.md'],
        agent_paths: [ECHO_NOTES_FILE],
      });
      expect(UNCOMMITTED_CHANGES_WARNING).toBe(
        "you have uncommitted changes, the agent's edits won't be auto-committed for now",
      );
      expect({
        head: git('rev-parse', 'HEAD'),
        index: sha1(join(workdir, '.git/index')),
        todo: sha1(join(workdir, 'TODO.md')),
      }).toEqual(before);
      expect(git('rev-list', '--count', 'HEAD').trim()).toBe('2');
      expect(git('status', '--porcelain')).toBe(` M ${ECHO_NOTES_FILE}\n?? TODO.md\n`);
      expect(await pushed).toEqual({ event: 'project_turn', session_id: NOTES_SESSION, result: s2.project });
    } finally {
      await watcher.close();
    }
  });

  it('import_projects: a dry run writes nothing, apply creates a project per repository (none written in); set_project_status', async () => {
    const base = join(dir, 'imports');
    for (const r of ['alpha', 'nested/beta']) execFileSync('git', ['init', '-q', join(base, r)]);
    const headOf = (r: string) => readdirSync(join(base, r, '.git')).sort();
    const before = [headOf('alpha'), headOf('nested/beta')];
    const names = async () => (await client.call('list_projects', {})).projects.map((p) => p.name);
    const had = await names();
    const dry = await client.call('import_projects', { dir: base });
    expect(dry).toEqual({
      dir: base,
      applied: false,
      candidates: [
        { workdir: join(base, 'alpha'), name: 'alpha', status: 'new', project_id: null },
        { workdir: join(base, 'nested/beta'), name: 'beta', status: 'new', project_id: null },
      ],
    });
    expect(await names()).toEqual(had);
    const done = await client.call('import_projects', { dir: base, apply: true });
    expect(done.candidates.map((c) => [c.name, c.status])).toEqual([
      ['alpha', 'created'],
      ['beta', 'created'],
    ]);
    expect(await names()).toEqual([...had, 'alpha', 'beta']);
    expect([headOf('alpha'), headOf('nested/beta')]).toEqual(before);
    expect((await client.call('import_projects', { dir: base })).candidates.map((c) => c.status)).toEqual([
      'exists',
      'exists',
    ]);
    expect(await code(client, 'import_projects', { dir: 'relative' })).toBe('INVALID_WORKDIR');

    const alpha = done.candidates[0]!.project_id!;
    expect(await client.call('set_project_status', { project_id: alpha, status: 'done' })).toMatchObject({
      id: alpha,
      status: 'done',
    });
    expect(await code(client, 'set_project_status', { project_id: alpha, status: 'archived' })).toBe(
      'INVALID_ARGUMENT',
    );
    expect((await store.projects.getProject(alpha))?.status).toBe('done');
  });
});

describe('the typed errors', () => {
  const longId = 'x'.repeat(1025);
  const zero = '0'.repeat(40);

  it('INVALID_ARGUMENT: not JSON, a binary frame, no action, bad params', async () => {
    expect(await client.raw('{not json')).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } });
    expect(await client.raw(Buffer.from('{}'))).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } });
    expect(await client.raw('42')).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } });
    expect(await client.raw(JSON.stringify({ id: 7, params: {} }))).toEqual({
      id: 7,
      ok: false,
      error: { code: 'INVALID_ARGUMENT', message: expect.stringContaining('action') },
    });
    const cases: Array<[string, unknown]> = [
      ['git_history', [1, 2]],
      ['git_history', {}],
      ['git_history', { session_id: 3 }],
      ['git_history', { session_id: DEMO_SESSION, branch: '' }],
      ['git_checkout', { session_id: DEMO_SESSION, commit_sha: 'abc' }],
      ['git_session_checkout', { session_id: DEMO_SESSION, commit_sha: zero.toUpperCase().replace(/0/g, 'A') }],
      ['git_branches', 'x'],
      ['git_switch_branch', { session_id: DEMO_SESSION }],
      ['project_detail', {}],
      ['create_project', { workdir: dir }],
      ['create_project', { name: '  ', workdir: dir }],
      ['add_session_to_project', { session_id: DEMO_SESSION }],
      ['export_session', { session_id: DEMO_SESSION, limit: 0 }],
      ['export_session', { session_id: DEMO_SESSION, after_seq: -1 }],
      ['export_session', { session_id: DEMO_SESSION, limit: 10_001 }],
      ['send_message', { session_id: DEMO_SESSION }],
      ['send_message', { session_id: DEMO_SESSION, content: '   ' }],
      ['send_message', { session_id: DEMO_SESSION, content: 'x'.repeat(100_001) }],
      ['project_log', { project_id: 'p', limit: 'ten' }],
      ['send_message', 'hello'],
    ];
    for (const [action, params] of cases)
      expect([action, params, await code(client, action, params)]).toEqual([action, params, 'INVALID_ARGUMENT']);
  });

  it('INVALID_ID: an id over 1024 bytes', async () => {
    for (const [action, params] of [
      ['git_history', { session_id: longId }],
      ['export_session', { session_id: longId }],
      ['project_log', { project_id: longId }],
      ['send_message', { session_id: DEMO_SESSION, content: 'hi', continue_from: longId }],
    ] as const)
      expect(await code(client, action, params)).toBe('INVALID_ID');
  });

  it('UNKNOWN_ACTION, prototype names included', async () => {
    for (const action of ['nope', 'toString', '__proto__', 'constructor', 'handle', 'core'])
      expect(await code(client, action, {})).toBe('UNKNOWN_ACTION');
  });

  it('SESSION_NOT_FOUND', async () => {
    for (const [action, params] of [
      ['git_history', { session_id: 'ghost' }],
      ['git_session_log', { session_id: 'ghost' }],
      ['git_checkout', { session_id: 'ghost', commit_sha: zero }],
      ['git_branches', { session_id: 'ghost' }],
      ['git_switch_branch', { session_id: 'ghost', branch: 'main' }],
      ['export_session', { session_id: 'ghost' }],
      ['send_message', { session_id: 'ghost', content: 'hi' }],
      ['create_project', { name: 'Ghostly', workdir: dir, session_id: 'ghost' }],
    ] as const)
      expect([action, await code(client, action, params)]).toEqual([action, 'SESSION_NOT_FOUND']);
    const { projects } = await client.call('list_projects', {});
    expect(await code(client, 'add_session_to_project', { project_id: projects[0]!.id, session_id: 'ghost' })).toBe(
      'SESSION_NOT_FOUND',
    );
    expect(projects.some((p) => p.name === 'Ghostly')).toBe(false);
  });

  it('COMMIT_NOT_FOUND and BRANCH_NOT_FOUND', async () => {
    expect(await code(client, 'git_checkout', { session_id: DEMO_SESSION, commit_sha: zero })).toBe('COMMIT_NOT_FOUND');
    const notes = await client.call('git_history', { session_id: NOTES_SESSION });
    expect(await code(client, 'git_checkout', { session_id: DEMO_SESSION, commit_sha: notes.commits[0]!.sha })).toBe(
      'COMMIT_NOT_FOUND',
    );
    expect(await code(client, 'git_switch_branch', { session_id: DEMO_SESSION, branch: 'nope' })).toBe(
      'BRANCH_NOT_FOUND',
    );
    expect(await code(client, 'git_history', { session_id: DEMO_SESSION, branch: 'nope' })).toBe('BRANCH_NOT_FOUND');
    const h = await client.call('git_history', { session_id: DEMO_SESSION });
    expect(
      await code(client, 'git_checkout', { session_id: DEMO_SESSION, commit_sha: h.commits[0]!.sha, branch: 'nope' }),
    ).toBe('BRANCH_NOT_FOUND');
  });

  it('PROJECT_NOT_FOUND, INVALID_WORKDIR, DUPLICATE_PROJECT', async () => {
    for (const [action, params] of [
      ['project_detail', { project_id: 'ghost' }],
      ['add_session_to_project', { project_id: 'ghost', session_id: DEMO_SESSION }],
      ['project_log', { project_id: 'ghost' }],
    ] as const)
      expect([action, await code(client, action, params)]).toEqual([action, 'PROJECT_NOT_FOUND']);
    for (const workdir of ['relative/dir', join(dir, 'missing'), join(dir, 'secret.txt'), 42]) {
      expect([workdir, await code(client, 'create_project', { name: `W ${String(workdir)}`, workdir })]).toEqual([
        workdir,
        'INVALID_WORKDIR',
      ]);
    }
    expect(await code(client, 'create_project', { name: 'Parser work', workdir: dir })).toBe('DUPLICATE_PROJECT');
  });

  it('NODE_NOT_FOUND: a message continuing from a node the session does not have', async () => {
    expect(await code(client, 'send_message', { session_id: DEMO_SESSION, content: 'hi', continue_from: 'n-a1' })).toBe(
      'NODE_NOT_FOUND',
    );
  });

  it("answers requests sent together, each reply carrying its own request's id and answer", async () => {
    const rs = await Promise.all([
      client.request('list_sessions'),
      client.request('git_branches', { session_id: NOTES_SESSION }),
      client.request('nope'),
      client.request('list_projects'),
    ]);
    expect(rs.map((r) => r.ok)).toEqual([true, true, false, true]);
    expect(rs[1]).toMatchObject({ ok: true, result: { session_id: NOTES_SESSION } });
    expect(rs[2]).toMatchObject({ ok: false, error: { code: 'UNKNOWN_ACTION' } });
    expect(rs[3]).toMatchObject({ ok: true, result: { projects: expect.any(Array) } });
  });
});
