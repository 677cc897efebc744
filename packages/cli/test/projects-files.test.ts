// `entity-git projects diff` and `projects restore`: a turn ended through the mirror service with
// shadow snapshots, then listed, diffed, restored and the restore undone from the command line.
import { createMirrorService } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { ShadowProjectGit } from '@entity-git/project/node';
import { openSqlite } from '@entity-git/sqlite';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { json, run, tempDir } from './fixture.js';

describe('entity-git projects diff and restore', () => {
  it('lists a turn’s files with who changed them, prints a diff, restores, skips the user’s file, undoes', async () => {
    const dir = tempDir();
    const db = join(dir, 'dag.db');
    const root = join(dir, 'sessions');
    const workdir = tempDir('entity-git-cli-shadow-');
    writeFileSync(join(workdir, 'a.txt'), 'a1\n');
    writeFileSync(join(workdir, 'b.txt'), 'b1\n');
    const store = await openSqlite({ file: db });
    await store.writer.createSession({ id: 'ps', model: 'm', created_at: 1779500000 });
    const project = await store.projects.createProject({ name: 'Wiki', workdir });
    await store.projects.addSessionToProject(project.id, 'ps');
    const service = createMirrorService({
      mirror: createNodeMirror({ dag: store.dag, root }),
      dag: store.dag,
      projects: store.projects,
      projectGit: new ShadowProjectGit({ root: join(root, '.shadow') }),
    });
    const snapshot = await service.beforeTurn('ps');
    writeFileSync(join(workdir, 'a.txt'), 'a by the agent\n');
    execFileSync('sh', ['-c', 'echo b by the shell > b.txt'], { cwd: workdir });
    await store.writer.appendNode({ id: 'u1', session_id: 'ps', role: 'user', content: 'go', created_at: 1779500010 });
    await store.writer.appendNode({
      id: 'a1',
      session_id: 'ps',
      role: 'assistant',
      content: 'ok',
      predecessor: 'u1',
      created_at: 1779500011,
    });
    service.notify('ps', { touchedPaths: ['a.txt'], snapshot });
    await service.drain();
    await service.close();
    await store.close();
    const cli = (...args: string[]) => run(['--db', db, '--root', root, 'projects', ...args]);

    const listed = await cli('diff', 'ps', '1');
    expect(listed.stdout).toBe('modified     +1 -1        tools  a.txt\nmodified     +1 -1        other  b.txt\n');
    const diff = await cli('diff', 'ps', '1', 'b.txt', '--json');
    expect(json(diff)).toMatchObject({ projectId: project.id, turn: 1, path: 'b.txt' });
    expect((json(diff) as { diff: string }).diff).toContain('-b1\n+b by the shell\n');

    writeFileSync(join(workdir, 'b.txt'), 'the user fixed b\n');
    const restored = json(await cli('restore', 'ps', '1', '--json')) as {
      restored: string;
      paths: string[];
      skipped: unknown[];
    };
    expect(restored.paths).toEqual(['a.txt']);
    expect(restored.skipped).toEqual([{ path: 'b.txt', reason: 'changed-since-last-snapshot' }]);
    expect(readFileSync(join(workdir, 'a.txt'), 'utf8')).toBe('a1\n');
    expect(readFileSync(join(workdir, 'b.txt'), 'utf8')).toBe('the user fixed b\n');
    const undo = await cli('restore', 'ps', '1', '--undo', restored.restored);
    expect(undo.stdout).toContain('restored a.txt\n');
    expect(readFileSync(join(workdir, 'a.txt'), 'utf8')).toBe('a by the agent\n');
    expect(json(await cli('mode', 'Wiki', '--json'))).toMatchObject({ projectId: project.id, mode: 'shadow' });
    expect(json(await cli('mode', 'Wiki', 'auto-commit', '--json'))).toMatchObject({ mode: 'auto-commit' });
    expect((await cli('mode', 'Wiki')).stdout).toContain(': auto-commit (');
    expect((await cli('mode', 'Wiki', 'sideways')).code).toBe(2);
    const missing = await cli('diff', 'ps', '2');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('SNAPSHOT_NOT_FOUND');
  });
});
