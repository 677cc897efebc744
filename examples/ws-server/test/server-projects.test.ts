// The project actions over a real WebSocket, in the order a user would: create (git init or reuse),
// add a session, a message in a project (an agent commit, or the warning), import, set a status.
import { UNCOMMITTED_CHANGES_WARNING } from '@entity-git/project';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECHO_NOTES_FILE, NOTES_SESSION } from '../src/index.js';
import { client, code, dir, server, store, wsUrl, useServer } from './server-helpers.js';
import { connect } from './ws-client.js';

useServer();

describe('the actions', () => {
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

    const a = await client.call('create_project', {
      name: 'Parser work',
      workdir: plain,
      session_id: NOTES_SESSION,
      init_repo: true,
    });
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
