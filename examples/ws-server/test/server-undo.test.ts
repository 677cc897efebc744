// Undoing the agent's turn over a real WebSocket: the echo agent's turn in a project commits its
// note, `project_agent_commits` links it to the turn's session commit, `revert_agent_turn` takes it
// back (a reset while it is the unpushed tip of a clean tree, a revert commit once the user has
// committed on top), a second undo says it was done, and refusals are typed. Native git judges.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_SESSION, ECHO_NOTES_FILE, NOTES_SESSION } from '../src/index.js';
import { client, code, dir, useServer } from './server-helpers.js';

useServer();

describe('undoing the agent’s turn', () => {
  it('lists the agent’s commits, resets an unpushed tip, reverts one the user built on, and refuses what is not the agent’s', async () => {
    const workdir = join(dir, 'work-undo');
    mkdirSync(workdir);
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=Ada', '-c', 'user.email=ada@example.com', ...args], {
        cwd: workdir,
        encoding: 'utf8',
      });
    git('init', '-q', '-b', 'main');
    writeFileSync(join(workdir, 'README.md'), '# work\n');
    git('add', 'README.md');
    git('commit', '-q', '-m', 'first commit');
    const first = git('rev-parse', 'HEAD').trim();
    const project = await client.call('create_project', { name: 'Undo', workdir, session_id: NOTES_SESSION });

    const sent = await client.call('send_message', { session_id: NOTES_SESSION, content: 'Note this down' });
    expect(sent.project).toMatchObject({ status: 'committed', paths: [ECHO_NOTES_FILE] });
    const agent = git('rev-parse', 'HEAD').trim();
    const listed = await client.call('project_agent_commits', { session_id: NOTES_SESSION });
    expect(listed).toMatchObject({ project_id: project.id, workdir, branch: 'refs/heads/main' });
    expect(listed.commits).toEqual([
      {
        commit: agent,
        turn: 3,
        subject: 'Note this down',
        session_commit: sent.commit,
        undone: null,
        revert_commit: null,
      },
    ]);

    const reset = await client.call('revert_agent_turn', { session_id: NOTES_SESSION, turn: 3 });
    expect(reset).toMatchObject({ kind: 'reset', commit: agent, head: first, paths: [ECHO_NOTES_FILE] });
    expect(git('rev-parse', 'HEAD').trim()).toBe(first);
    expect(git('status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(git('fsck', '--strict')).toBe('');
    expect(await client.call('revert_agent_turn', { session_id: NOTES_SESSION, commit: agent })).toMatchObject({
      kind: 'already-reverted',
      by: 'reset',
      head: null,
    });
    expect((await client.call('project_agent_commits', { session_id: NOTES_SESSION })).commits[0]).toMatchObject({
      commit: agent,
      undone: 'reset',
    });

    const again = await client.call('send_message', { session_id: NOTES_SESSION, content: 'Note it again' });
    expect(again.project).toMatchObject({ status: 'committed' });
    const second = git('rev-parse', 'HEAD').trim();
    writeFileSync(join(workdir, 'mine.txt'), 'the user’s\n');
    git('add', 'mine.txt');
    git('commit', '-q', '-m', 'the user builds on it');
    const mine = git('rev-parse', 'HEAD').trim();
    const reverted = await client.call('revert_agent_turn', { session_id: NOTES_SESSION, turn: 4 });
    expect(reverted).toMatchObject({ kind: 'reverted', commit: second, paths: [ECHO_NOTES_FILE] });
    expect(git('log', '-1', '--format=%P%n%s').trim()).toBe(
      `${mine}\n[agent lexer-notes] revert turn 4: Note it again`,
    );
    expect(reverted.head).toBe(git('rev-parse', 'HEAD').trim());
    expect(readFileSync(join(workdir, 'mine.txt'), 'utf8')).toBe('the user’s\n');
    expect(git('status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(git('fsck', '--strict')).toBe('');

    const status = git('rev-parse', 'HEAD');
    expect(await code(client, 'revert_agent_turn', { session_id: NOTES_SESSION, commit: mine })).toBe(
      'NOT_AGENT_COMMIT',
    );
    expect(await code(client, 'revert_agent_turn', { session_id: NOTES_SESSION, turn: 1 })).toBe(
      'AGENT_COMMIT_NOT_FOUND',
    );
    expect(await code(client, 'revert_agent_turn', { session_id: NOTES_SESSION })).toBe('INVALID_ARGUMENT');
    expect(await code(client, 'revert_agent_turn', { session_id: NOTES_SESSION, turn: 'x' })).toBe('INVALID_ARGUMENT');
    expect(await code(client, 'revert_agent_turn', { session_id: NOTES_SESSION, commit: 'HEAD' })).toBe(
      'INVALID_ARGUMENT',
    );
    expect(await code(client, 'project_agent_commits', { session_id: DEMO_SESSION })).toBe('PROJECT_NOT_FOUND');
    expect(await code(client, 'revert_agent_turn', { session_id: 'ghost', turn: 1 })).toBe('SESSION_NOT_FOUND');
    expect(git('rev-parse', 'HEAD')).toBe(status);
  });
});
