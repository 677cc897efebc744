// `entity-git projects revert`: the agent's turn committed through the mirror service into a real
// repository, then undone from the command line — a reset, the same again (a no-op), a revert
// commit after a commit of the user's — and refusals with their exit codes. Native git judges.
import { createMirrorService } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { createNodeProjectGit } from '@entity-git/project/node';
import { openSqlite, type SqlStore } from '@entity-git/sqlite';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, json, run, tempDir } from './fixture.js';

const USER = ['-c', 'user.name=User', '-c', 'user.email=u@example.com', '-c', 'commit.gpgsign=false'];

/** One turn of session `ps` writing `notes.md`, ended through the service (sync, then the auto-commit). */
async function agentTurn(store: SqlStore, root: string, workdir: string, n: number, text: string): Promise<void> {
  const service = createMirrorService({
    mirror: createNodeMirror({ dag: store.dag, root }),
    dag: store.dag,
    projects: store.projects,
    projectGit: createNodeProjectGit(),
  });
  const snapshot = await service.beforeTurn('ps');
  writeFileSync(join(workdir, 'notes.md'), text);
  const prev = n === 1 ? null : `a${n - 1}`;
  await store.writer.appendNode({
    id: `u${n}`,
    session_id: 'ps',
    role: 'user',
    content: `Write note ${n}`,
    predecessor: prev,
    created_at: 1779500000 + n * 10,
  });
  await store.writer.appendNode({
    id: `a${n}`,
    session_id: 'ps',
    role: 'assistant',
    content: 'Written.',
    predecessor: `u${n}`,
    created_at: 1779500001 + n * 10,
  });
  service.notify('ps', { touchedPaths: ['notes.md'], snapshot });
  await service.drain();
  await service.close();
}

describe('entity-git projects revert', () => {
  it('resets the agent’s unpushed tip, says so the second time, reverts after a user commit, refuses with exit 1 or 2', async () => {
    const dir = tempDir();
    const db = join(dir, 'dag.db');
    const root = join(dir, 'sessions');
    const workdir = tempDir('entity-git-cli-proj-');
    git(workdir, 'init', '-q', '-b', 'main');
    writeFileSync(join(workdir, 'README.md'), 'user\n');
    git(workdir, 'add', 'README.md');
    git(workdir, ...USER, 'commit', '-q', '-m', 'by the user');
    const userFirst = git(workdir, 'rev-parse', 'HEAD');
    const store = await openSqlite({ file: db });
    await store.writer.createSession({ id: 'ps', model: 'claude-sonnet-4.7', created_at: 1779500000 });
    const project = await store.projects.createProject({ name: 'Wiki', workdir });
    await store.projects.addSessionToProject(project.id, 'ps');
    await agentTurn(store, root, workdir, 1, 'note 1\n');
    const agent1 = git(workdir, 'rev-parse', 'HEAD');
    expect(git(workdir, 'log', '-1', '--format=%s')).toBe('[agent ps] turn 1: Write note 1');
    const cli = (...args: string[]) => run(['--db', db, '--root', root, 'projects', 'revert', ...args]);

    const reset = await cli('ps', '1', '--json');
    expect(json(reset)).toEqual({
      kind: 'reset',
      projectId: project.id,
      workdir,
      sessionId: 'ps',
      turn: 1,
      commit: agent1,
      branch: 'refs/heads/main',
      head: userFirst,
      revertCommit: null,
      by: null,
      paths: ['notes.md'],
      message: `Undone: main moved back over the agent's commit ${agent1.slice(0, 12)} (turn 1); 1 file restored.`,
    });
    expect(git(workdir, 'rev-parse', 'HEAD')).toBe(userFirst);
    expect(git(workdir, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    const twice = await cli('ps', '1');
    expect([twice.code, twice.stdout]).toEqual([
      0,
      `The agent's edits of turn 1 were already undone: ${agent1.slice(0, 12)} is no longer on the branch (an undo moved it back).\n`,
    ]);

    await agentTurn(store, root, workdir, 2, 'note 2\n');
    const agent2 = git(workdir, 'rev-parse', 'HEAD');
    writeFileSync(join(workdir, 'mine.txt'), 'mine\n');
    git(workdir, 'add', 'mine.txt');
    git(workdir, ...USER, 'commit', '-q', '-m', 'the user builds on it');
    const mine = git(workdir, 'rev-parse', 'HEAD');

    // Refusals first: each leaves the repository as it is.
    writeFileSync(join(workdir, 'notes.md'), 'the user is typing\n');
    const dirty = await cli('ps', '2');
    expect(dirty.code).toBe(1);
    expect(dirty.stderr).toBe('entity-git: you have uncommitted changes on notes.md, which the undo would overwrite\n');
    git(workdir, 'checkout', '--', 'notes.md');
    const notAgent = await cli('ps', '--commit', mine);
    expect([notAgent.code, notAgent.stderr]).toEqual([
      2,
      `entity-git: ${mine.slice(0, 12)} is not an agent commit of session ps: only the agent's own commits are undone\n`,
    ]);
    expect((await cli('ps')).code).toBe(2);
    expect((await cli('ps', 'two')).code).toBe(2);
    expect((await cli('ghost', '1')).code).toBe(2);
    expect(git(workdir, 'rev-parse', 'HEAD')).toBe(mine);

    const reverted = await cli('ps', '2', '--commit', agent2);
    expect(reverted.code).toBe(0);
    const head = git(workdir, 'rev-parse', 'HEAD');
    expect(reverted.stdout).toBe(
      `Undone: the new commit ${head.slice(0, 12)} on main takes back the agent's commit ${agent2.slice(0, 12)} (turn 2); 1 file restored.\n  restored notes.md\n`,
    );
    expect(git(workdir, 'log', '-1', '--format=%P|%s|%cn|%(trailers:key=Reverts,valueonly)').trimEnd()).toBe(
      `${mine}|[agent ps] revert turn 2: Write note 2|agent (claude-sonnet-4.7 via OpenProgram)|${agent2}`,
    );
    expect(readFileSync(join(workdir, 'mine.txt'), 'utf8')).toBe('mine\n');
    expect(git(workdir, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(git(workdir, 'fsck', '--strict')).toBe('');
    await store.close();
  });
});
