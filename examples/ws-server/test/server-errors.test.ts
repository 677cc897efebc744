// Every typed error over a real WebSocket, and requests sent together answered each by its id.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SESSION, NOTES_SESSION } from '../src/index.js';
import { client, code, dir, useServer } from './server-helpers.js';

useServer();

// The project the errors meet (DUPLICATE_PROJECT, a ghost session added to it), as the actions'
// tests make it (server-projects.test.ts): this file has a server of its own.
beforeAll(async () => {
  const plain = join(dir, 'work-plain');
  mkdirSync(plain);
  await client.call('create_project', { name: 'Parser work', workdir: plain, init_repo: true });
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
    expect(await code(client, 'create_project', { name: 'Parser work', workdir: dir, init_repo: true })).toBe(
      'DUPLICATE_PROJECT',
    );
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
