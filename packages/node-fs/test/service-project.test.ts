import { createMirrorService, MemoryDag, type ServiceEvents } from '@entity-git/core';
import { UNCOMMITTED_CHANGES_WARNING } from '@entity-git/project';
import { gitBlobId } from '@entity-git/git';
import { createNodeMirror } from '@entity-git/node-fs';
import { createNodeProjectGit } from '@entity-git/project/node';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir, userRepo } from './helpers.js';

const hash = (file: string) => createHash('sha1').update(readFileSync(file)).digest('hex');

describe('the service with a project', () => {
  it('auto-commits a clean turn, skips with the warning when the user has edits, and reports both', async () => {
    const workdir = userRepo();

    const dag = new MemoryDag();
    await dag.createSession({ id: 'sess', model: 'claude-sonnet-4.7', created_at: 1779500000 });
    const project = await dag.createProject({ name: 'Wiki', workdir });
    await dag.addSessionToProject(project.id, 'sess');
    const mirror = createNodeMirror({ dag, root: tempDir() });
    const service = createMirrorService({
      mirror,
      dag,
      projects: dag,
      projectGit: createNodeProjectGit({ dir: tempDir('eg-locks-') }),
    });
    const events: string[] = [];
    const skipped: ServiceEvents['skipped'][] = [];
    service.on('project', (e) => events.push(`${e.projectId === project.id}:${e.result.status}`));
    service.on('skipped', (e) => skipped.push(e));

    // Turn 1: a clean tree, the agent writes src/a.ts.
    let snapshot = await service.beforeTurn('sess');
    expect(snapshot).not.toBeNull();
    writeFileSync(join(workdir, 'a.ts'), 'export const a = 1;\n');
    await dag.appendNode({
      id: 'u1',
      session_id: 'sess',
      role: 'user',
      content: 'Create   a.ts with a constant',
      created_at: 1779500001,
    });
    await dag.appendNode({
      id: 'a1',
      session_id: 'sess',
      role: 'assistant',
      content: 'Done.',
      predecessor: 'u1',
      created_at: 1779500002,
    });
    service.notify('sess', { touchedPaths: ['a.ts'], snapshot });
    await service.drain();
    expect(events).toEqual(['true:committed']);
    const sessionTip = git(mirror.repoPath('sess'), 'rev-parse', 'HEAD').trim();
    expect(git(workdir, 'log', '-1', '--format=%s|%cn').trim()).toBe(
      '[agent sess] turn 1: Create a.ts with a constant|agent (claude-sonnet-4.7 via OpenProgram)',
    );
    expect(git(workdir, 'log', '-1', '--format=%B')).toContain(sessionTip);
    expect(git(workdir, 'show', '--name-only', '--format=', 'HEAD').trim()).toBe('a.ts');
    expect(git(workdir, 'status', '--porcelain')).toBe('');

    // Turn 2: the user edited README.md before the turn; the agent writes b.ts.
    writeFileSync(join(workdir, 'README.md'), '# user project\nmy notes\n');
    snapshot = await service.beforeTurn('sess');
    writeFileSync(join(workdir, 'b.ts'), 'export const b = 2;\n');
    const before = {
      head: git(workdir, 'rev-parse', 'HEAD'),
      index: hash(join(workdir, '.git/index')),
      readme: hash(join(workdir, 'README.md')),
    };
    await dag.appendNode({
      id: 'u2',
      session_id: 'sess',
      role: 'user',
      content: 'Now b.ts',
      predecessor: 'a1',
      created_at: 1779500003,
    });
    await dag.appendNode({
      id: 'a2',
      session_id: 'sess',
      role: 'assistant',
      content: 'Done.',
      predecessor: 'u2',
      created_at: 1779500004,
    });
    service.notify('sess', { touchedPaths: [join(workdir, 'b.ts')], snapshot });
    await service.drain();
    expect(events).toEqual(['true:committed', 'true:skipped']);
    expect(skipped.map((s) => [s.reason, s.warning])).toEqual([['uncommitted-changes', UNCOMMITTED_CHANGES_WARNING]]);
    expect(UNCOMMITTED_CHANGES_WARNING).toBe(
      "you have uncommitted changes, the agent's edits won't be auto-committed for now",
    );
    expect({
      head: git(workdir, 'rev-parse', 'HEAD'),
      index: hash(join(workdir, '.git/index')),
      readme: hash(join(workdir, 'README.md')),
    }).toEqual(before);
    expect(git(mirror.repoPath('sess'), 'rev-list', '--count', 'main').trim()).toBe('2');

    // A session without a project, and a paused project: no project commit.
    await dag.setProjectStatus(project.id, 'paused');
    service.notify('sess', { touchedPaths: ['c.ts'] });
    await service.drain();
    expect(skipped.at(-1)?.reason).toBe('project-paused');
  });

  it('passes writtenBlobs through: the user editing the agent’s very file during the turn blocks it, byte for byte', async () => {
    const workdir = userRepo('notes.md', '# notes\n');
    const dag = new MemoryDag();
    await dag.createSession({ id: 'sess', model: 'm', created_at: 1779500000 });
    const project = await dag.createProject({ name: 'Notes', workdir });
    await dag.addSessionToProject(project.id, 'sess');
    const service = createMirrorService({
      mirror: createNodeMirror({ dag, root: tempDir() }),
      dag,
      projects: dag,
      projectGit: createNodeProjectGit({ dir: tempDir('eg-locks-') }),
    });
    const results: string[] = [];
    service.on('project', (e) =>
      results.push(e.result.status === 'skipped' ? `skipped:${e.result.reason}` : e.result.status),
    );

    const snapshot = await service.beforeTurn('sess');
    const agentBytes = '# notes\n- the agent\n';
    writeFileSync(join(workdir, 'notes.md'), agentBytes);
    writeFileSync(join(workdir, 'notes.md'), `${agentBytes}- the user, mid-turn\n`);
    const before = { head: git(workdir, 'rev-parse', 'HEAD'), index: hash(join(workdir, '.git/index')) };
    await dag.appendNode({ id: 'u1', session_id: 'sess', role: 'user', content: 'Add a line', created_at: 1779500001 });
    await dag.appendNode({
      id: 'a1',
      session_id: 'sess',
      role: 'assistant',
      content: 'Added.',
      predecessor: 'u1',
      created_at: 1779500002,
    });
    service.notify('sess', {
      touchedPaths: ['notes.md'],
      writtenBlobs: { 'notes.md': gitBlobId(agentBytes) },
      snapshot,
    });
    await service.drain();
    expect(results).toEqual(['skipped:uncommitted-changes']);
    expect({ head: git(workdir, 'rev-parse', 'HEAD'), index: hash(join(workdir, '.git/index')) }).toEqual(before);
    expect(readFileSync(join(workdir, 'notes.md'), 'utf8')).toBe(`${agentBytes}- the user, mid-turn\n`);
  });
});
