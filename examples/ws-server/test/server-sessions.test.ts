// The session actions over a real WebSocket: history, checkout, branches and export (the rows
// rebuild the same commit ids), then, in the order a user would, a branch switch and a fork.
import { MemoryDag, type DagNode } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_SESSION, NOTES_SESSION } from '../src/index.js';
import { client, server, store, useServer } from './server-helpers.js';

useServer();

describe('the actions', () => {
  it('server_info lists every action', async () => {
    const info = await client.call('server_info', {});
    expect(info.agent).toBe(true);
    expect(info.actions).toEqual([
      'add_session_to_project',
      'create_project',
      'export_session',
      'export_transcript',
      'git_branches',
      'git_checkout',
      'git_history',
      'git_session_checkout',
      'git_session_log',
      'git_switch_branch',
      'import_projects',
      'list_projects',
      'list_sessions',
      'list_turn_files',
      'project_agent_commits',
      'project_detail',
      'project_log',
      'project_status',
      'restore_turn_files',
      'revert_agent_turn',
      'search_messages',
      'send_message',
      'server_info',
      'session_stats',
      'set_project_status',
      'turn_file_diff',
      'turn_messages',
      'undo_restore_turn_files',
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
});
