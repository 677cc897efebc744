import { createMirrorService } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { createNodeProjectGit } from '@entity-git/project/node';
import { openSqlite } from '@entity-git/sqlite';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, json, run, tempDir } from './fixture.js';

describe('entity-git log --project', () => {
  it("lists the agent's commits in the project's repository, with their trailers", async () => {
    const dir = tempDir();
    const db = join(dir, 'dag.db');
    const root = join(dir, 'sessions');
    const workdir = tempDir('entity-git-cli-proj-');
    git(workdir, 'init', '-q', '-b', 'main');
    writeFileSync(join(workdir, 'README.md'), 'user\n');
    git(workdir, 'add', 'README.md');
    git(
      workdir,
      '-c',
      'user.name=User',
      '-c',
      'user.email=u@example.com',
      '-c',
      'commit.gpgsign=false',
      'commit',
      '-q',
      '-m',
      'by the user',
    );

    const store = await openSqlite({ file: db });
    await store.writer.createSession({ id: 'ps', model: 'claude-sonnet-4.7', created_at: 1779500000 });
    const project = await store.projects.createProject({ name: 'Wiki', workdir });
    await store.projects.addSessionToProject(project.id, 'ps');
    const mirror = createNodeMirror({ dag: store.dag, root });
    const service = createMirrorService({
      mirror,
      dag: store.dag,
      projects: store.projects,
      projectGit: createNodeProjectGit({ dir: tempDir('entity-git-cli-locks-') }),
    });
    const snapshot = await service.beforeTurn('ps');
    writeFileSync(join(workdir, 'notes.md'), 'agent\n');
    await store.writer.appendNode({
      id: 'u1',
      session_id: 'ps',
      role: 'user',
      content: 'Write notes',
      created_at: 1779500001,
    });
    await store.writer.appendNode({
      id: 'a1',
      session_id: 'ps',
      role: 'assistant',
      content: 'Written.',
      predecessor: 'u1',
      created_at: 1779500002,
    });
    service.notify('ps', { touchedPaths: ['notes.md'], snapshot });
    await service.drain();
    await store.close();
    const sessionCommit = git(join(root, 'ps'), 'rev-parse', 'HEAD');
    const agentCommit = git(workdir, 'rev-parse', 'HEAD');

    const asJson = await run(['--db', db, '--root', root, 'log', '--project', 'Wiki', '--json']);
    expect(asJson.code).toBe(0);
    expect(json(asJson)).toEqual({
      projectId: project.id,
      workdir,
      commits: [
        {
          sha: agentCommit,
          subject: '[agent ps] turn 1: Write notes',
          committer: 'agent (claude-sonnet-4.7 via OpenProgram)',
          time: expect.any(Number),
          session: 'ps',
          turn: 1,
          sessionCommit,
        },
      ],
    });
    const text = await run(['--db', db, '--root', root, 'log', '--project', project.id]);
    expect(text.stdout).toMatch(new RegExp(`^${agentCommit.slice(0, 10)} \\S+ \\[agent ps\\] turn 1: Write notes\\n$`));
    expect(await run(['--db', db, '--root', root, 'log', '--project', 'nope'])).toMatchObject({
      code: 2,
      stderr: 'entity-git: no project with id or name "nope"\n',
    });
    expect((await run(['--db', db, '--root', root, 'log'])).code).toBe(2);
    expect((await run(['--db', db, '--root', root, 'log', 'ps', '--project', 'Wiki'])).code).toBe(2);
  });
});
