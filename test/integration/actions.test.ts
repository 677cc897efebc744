import { createActions, MemoryDag } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../../packages/node-fs/test/helpers.js';

const SID = GOLDEN_SESSION.id;
const TURN1 = '4b1cc3d267e0d1e614cf1f5670401133cff1ac7f';
const FORK_U4 = '17a4c695c75333ca3ac7710e31cd26d953bab6d6';
const RETRY = 'd080c326d39a5951408d85b37d2ad5734ef66218';

async function setup() {
  const dag = new MemoryDag({ now: () => 1779600000 });
  await writeGolden(dag);
  const mirror = createNodeMirror({ dag, root: tempDir() });
  await mirror.sync(SID);
  return { dag, mirror, actions: createActions({ dag, mirror, writer: dag, projects: dag }) };
}

describe('actions, in process', () => {
  it('git_history and its alias give the timeline of the HEAD branch or a named one', async () => {
    const { actions } = await setup();
    const h = await actions.git_history({ session_id: SID });
    expect(h).toEqual({
      session_id: SID,
      branch: 'fork-u4',
      commits: [
        {
          sha: FORK_U4,
          parents: [TURN1],
          turn: 2,
          subject: 'turn 2: 从头开始：总结这个仓库',
          time: 1779500028,
          node: 'a7',
          seq: 19,
        },
        {
          sha: TURN1,
          parents: [],
          turn: 1,
          subject: 'turn 1: 列出 src 目录中的文件 🙂 请简短回答',
          time: 1779500009,
          node: 'a2',
          seq: 6,
        },
      ],
    });
    expect(await actions.git_session_log({ session_id: SID, branch: 'retry-a4r' })).toMatchObject({
      branch: 'retry-a4r',
      commits: [{ sha: RETRY }, { sha: TURN1 }],
    });
  });

  it('git_checkout and its alias replay a turn read-only and name the node to continue from', async () => {
    const { actions, mirror } = await setup();
    const status = git(mirror.repoPath(SID), 'status', '--porcelain=v2', '--branch');
    const c = await actions.git_checkout({ session_id: SID, commit_sha: TURN1 });
    expect(c).toMatchObject({
      commit: TURN1,
      branch: 'fork-u4',
      turn: 1,
      turns: 2,
      prev: null,
      next: FORK_U4,
      continue_from: 'a2',
    });
    expect(c.messages.map((m) => m.id)).toEqual(['s1', 'u1', 'a1', 't1', 't2', 'a2']);
    expect(
      await actions.git_session_checkout({ session_id: SID, commit_sha: RETRY, branch: 'retry-a4r' }),
    ).toMatchObject({ turn: 2, turns: 2, prev: TURN1, next: null, continue_from: 'a4r' });
    expect(git(mirror.repoPath(SID), 'status', '--porcelain=v2', '--branch')).toBe(status);
  });

  it('git_branches and git_switch_branch move the DAG head and HEAD with it', async () => {
    const { actions, dag, mirror } = await setup();
    expect((await actions.git_branches({ session_id: SID })).branches.map((b) => [b.name, b.head])).toEqual([
      ['main', false],
      ['fork-u2e', false],
      ['fork-u4', true],
      ['retry-a4r', false],
    ]);
    const s = await actions.git_switch_branch({ session_id: SID, branch: 'retry-a4r' });
    expect(s.head_node).toBe('a4r');
    expect(s.branches.find((b) => b.head)?.name).toBe('retry-a4r');
    expect(await dag.getHead(SID)).toBe('a4r');
    expect(git(mirror.repoPath(SID), 'symbolic-ref', '--short', 'HEAD').trim()).toBe('retry-a4r');
    expect(git(mirror.repoPath(SID), 'status', '--porcelain')).toBe('');
  });

  it('lists sessions and projects, creates a project, adds a session, shows a project', async () => {
    const { actions } = await setup();
    expect(await actions.list_sessions({})).toEqual({
      sessions: [
        {
          id: SID,
          title: 'Golden session',
          model: 'claude-sonnet-4.7',
          project_id: null,
          created_at: 1779500000,
          branch: 'fork-u4',
          turns: 2,
        },
      ],
    });
    expect(await actions.list_projects({})).toEqual({ projects: [] });
    const workdir = tempDir();
    const p = await actions.create_project({ name: 'Wiki Agent Refactor', workdir, session_id: SID });
    expect(p).toMatchObject({
      name: 'Wiki Agent Refactor',
      workdir,
      status: 'active',
      sessions: [SID],
      sessions_count: 1,
    });
    const q = await actions.create_project({ name: 'DAG Visualization', workdir });
    expect(q.sessions_count).toBe(0);
    expect(await actions.add_session_to_project({ project_id: q.id, session_id: SID })).toMatchObject({
      sessions: [SID],
      sessions_count: 1,
    });
    const detail = await actions.project_detail({ project_id: q.id });
    expect(detail.session_details).toEqual([
      {
        id: SID,
        title: 'Golden session',
        model: 'claude-sonnet-4.7',
        project_id: q.id,
        created_at: 1779500000,
        branch: 'fork-u4',
        turns: 2,
      },
    ]);
    expect((await actions.list_projects({})).projects.map((x) => [x.name, x.sessions_count])).toEqual([
      ['Wiki Agent Refactor', 0],
      ['DAG Visualization', 1],
    ]);
  });

  it("set_project_status changes a project's status, and refuses an unknown status with nothing changed", async () => {
    const { actions, dag } = await setup();
    const p = await actions.create_project({ name: 'Status', workdir: tempDir() });
    expect(await actions.set_project_status({ project_id: p.id, status: 'paused' })).toMatchObject({
      id: p.id,
      status: 'paused',
    });
    expect((await dag.getProject(p.id))?.status).toBe('paused');
    expect(
      await actions.handle({ action: 'set_project_status', params: { project_id: p.id, status: 'finished' } }),
    ).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } });
    expect(
      await actions.handle({ action: 'set_project_status', params: { project_id: 'ghost', status: 'done' } }),
    ).toMatchObject({ ok: false, error: { code: 'PROJECT_NOT_FOUND' } });
    expect((await actions.list_projects({})).projects.map((x) => x.status)).toEqual(['paused']);
  });

  it('turn_messages reads a window of turns from the DAG, message for message what git_checkout reads from the repository', async () => {
    const { actions } = await setup();
    for (const branch of ['fork-u4', 'retry-a4r', 'main']) {
      const { commits } = await actions.git_history({ session_id: SID, branch });
      const [tip, before] = commits;
      const full = await actions.git_checkout({ session_id: SID, commit_sha: tip!.sha, branch });
      expect(
        (await actions.turn_messages({ session_id: SID, to_node: tip!.node!, to_seq: tip!.seq!, from_seq: 0 }))
          .messages,
      ).toEqual(full.messages);
      const last = await actions.turn_messages({
        session_id: SID,
        to_node: tip!.node!,
        to_seq: tip!.seq!,
        from_seq: before!.seq!,
      });
      expect(last.messages).toEqual(full.messages.slice(full.messages.findIndex((m) => m.id === before!.node) + 1));
    }
    expect(
      await actions.handle({
        action: 'turn_messages',
        params: { session_id: SID, to_node: 'ghost', to_seq: 6, from_seq: 0 },
      }),
    ).toMatchObject({ ok: false, error: { code: 'NODE_NOT_FOUND' } });
    expect(await actions.handle({ action: 'turn_messages', params: { session_id: SID, to_node: 'a2' } })).toMatchObject(
      { ok: false, error: { code: 'INVALID_ARGUMENT' } },
    );
  });

  it('answers every bad request with a typed error through handle, never a throw', async () => {
    const { actions } = await setup();
    const workdir = tempDir();
    const cases: [unknown, string][] = [
      [{ action: 'nope' }, 'UNKNOWN_ACTION'],
      [{ action: 'toString' }, 'UNKNOWN_ACTION'],
      [null, 'INVALID_ARGUMENT'],
      [{ action: 'git_history', params: [] }, 'INVALID_ARGUMENT'],
      [{ action: 'git_history', params: {} }, 'INVALID_ARGUMENT'],
      [{ action: 'git_history', params: { session_id: 'x'.repeat(2000) } }, 'INVALID_ID'],
      [{ action: 'git_history', params: { session_id: 'ghost' } }, 'SESSION_NOT_FOUND'],
      [{ action: 'git_checkout', params: { session_id: SID, commit_sha: 'HEAD' } }, 'INVALID_ARGUMENT'],
      [{ action: 'git_checkout', params: { session_id: SID, commit_sha: TURN1.toUpperCase() } }, 'INVALID_ARGUMENT'],
      [{ action: 'git_checkout', params: { session_id: SID, commit_sha: 'f'.repeat(40) } }, 'COMMIT_NOT_FOUND'],
      [{ action: 'git_checkout', params: { session_id: SID, commit_sha: TURN1, branch: 'nope' } }, 'BRANCH_NOT_FOUND'],
      [{ action: 'git_switch_branch', params: { session_id: SID, branch: 'nope' } }, 'BRANCH_NOT_FOUND'],
      [{ action: 'git_switch_branch', params: { session_id: SID } }, 'INVALID_ARGUMENT'],
      [{ action: 'create_project', params: { name: 'x', workdir: 'relative/dir' } }, 'INVALID_WORKDIR'],
      [{ action: 'create_project', params: { name: '', workdir } }, 'INVALID_ARGUMENT'],
      [{ action: 'create_project', params: { name: 'x', workdir, session_id: 'ghost' } }, 'SESSION_NOT_FOUND'],
      [{ action: 'add_session_to_project', params: { project_id: 'ghost', session_id: SID } }, 'PROJECT_NOT_FOUND'],
      [{ action: 'project_detail', params: { project_id: 'ghost' } }, 'PROJECT_NOT_FOUND'],
    ];
    for (const [request, code] of cases) {
      const r = await actions.handle(request as never);
      expect([request, r.ok ? 'ok' : r.error.code]).toEqual([request, code]);
    }
    await actions.create_project({ name: 'dup', workdir });
    expect(await actions.handle({ id: 7, action: 'create_project', params: { name: 'dup', workdir } })).toMatchObject({
      id: 7,
      ok: false,
      error: { code: 'DUPLICATE_PROJECT' },
    });
    expect(await actions.handle({ id: 'a', action: 'git_branches', params: { session_id: SID } })).toMatchObject({
      id: 'a',
      ok: true,
    });
    const readOnly = createActions({
      dag: new MemoryDag(),
      mirror: createNodeMirror({ dag: new MemoryDag(), root: tempDir() }),
    });
    expect(await readOnly.handle({ action: 'list_projects' })).toMatchObject({
      ok: false,
      error: { code: 'INVALID_ARGUMENT' },
    });
  });
});
