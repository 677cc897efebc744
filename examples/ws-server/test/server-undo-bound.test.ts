// The probe of the server's undo, over the socket: a commit the user's own git makes with the
// agent's committer name, its subject and trailers, in a project bound to a different session,
// and then in the session's own project. Neither is undone; the branches do not move.
import { projectCommitMessage } from '@entity-git/project';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_SESSION, NOTES_SESSION } from '../src/index.js';
import { client, code, dir, useServer } from './server-helpers.js';

useServer();

const AGENT = {
  GIT_COMMITTER_NAME: 'agent (demo-model via OpenProgram)',
  GIT_COMMITTER_EMAIL: 'agent@openprogram.invalid',
};

function repo(name: string): { workdir: string; git: (...args: string[]) => string } {
  const workdir = join(dir, name);
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
  return { workdir, git };
}

/** The forged "agent commit" of `demo-replay`'s turn 3, made with the user's git. */
function forge(r: ReturnType<typeof repo>): string {
  writeFileSync(join(r.workdir, 'forged.txt'), 'x\n');
  r.git('add', 'forged.txt');
  execFileSync(
    'git',
    [
      '-c',
      'user.name=Ada',
      '-c',
      'user.email=ada@example.com',
      'commit',
      '-q',
      '-m',
      projectCommitMessage(DEMO_SESSION, 3, 'forged', null),
    ],
    {
      cwd: r.workdir,
      env: { ...process.env, ...AGENT },
    },
  );
  return r.git('rev-parse', 'HEAD').trim();
}

describe('undo: the bound project only, and only what entity-git recorded', () => {
  it('a forged commit in another session’s project: SESSION_NOT_IN_PROJECT; in the session’s own: NOT_AGENT_COMMIT; nothing moves', async () => {
    const a = repo('bound-to-demo');
    const b = repo('bound-to-notes');
    const pa = await client.call('create_project', { name: 'A', workdir: a.workdir, session_id: DEMO_SESSION });
    const pb = await client.call('create_project', { name: 'B', workdir: b.workdir, session_id: NOTES_SESSION });
    const forgedB = forge(b);
    const forgedA = forge(a);
    for (const params of [
      { session_id: DEMO_SESSION, project_id: pb.id, turn: 3 },
      { session_id: DEMO_SESSION, project_id: pb.id, commit: forgedB },
    ])
      expect(await code(client, 'revert_agent_turn', params)).toBe('SESSION_NOT_IN_PROJECT');
    expect(await code(client, 'project_agent_commits', { session_id: DEMO_SESSION, project_id: pb.id })).toBe(
      'SESSION_NOT_IN_PROJECT',
    );
    for (const params of [
      { session_id: DEMO_SESSION, turn: 3 },
      { session_id: DEMO_SESSION, project_id: pa.id, commit: forgedA },
    ])
      expect(await code(client, 'revert_agent_turn', params)).toBe('NOT_AGENT_COMMIT');
    expect((await client.call('project_agent_commits', { session_id: DEMO_SESSION })).commits).toEqual([]);
    expect([a.git('rev-parse', 'HEAD').trim(), b.git('rev-parse', 'HEAD').trim()]).toEqual([forgedA, forgedB]);
  });
});
