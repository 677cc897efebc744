// Shadow mode under the mirror service and the actions: a turn reported to the service is
// snapshotted before and after, linked with its session commit, and the turn-file actions list,
// diff and restore it.
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { createActions, createMirrorService, MemoryDag } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { describe, expect, it } from 'vitest';
import { ShadowProjectGit, ShadowRepository, turnRef } from '../../src/node/index.js';
import { isolateGit, judge } from './judge.js';

isolateGit();

describe('shadow mode through the mirror service and the actions', () => {
  it('snapshots the service turn, links it with the session commit, and lists, diffs and restores it', async () => {
    const workdir = await judge.tempDir();
    const base = await judge.tempDir();
    await judge.write(join(workdir, 'keep.txt'), 'before\n');
    let clock = 1779500000;
    const dag = new MemoryDag({ now: () => clock });
    const mirror = createNodeMirror({ dag, root: join(base, 'sessions') });
    const projectGit = new ShadowProjectGit({ root: join(base, 'shadow') });
    const service = createMirrorService({ mirror, dag, projects: dag, projectGit });
    await dag.createSession({ id: 's1', title: 'T', agent_id: 'a', model: 'm', created_at: clock });
    const project = await dag.createProject({ name: 'P', workdir });
    await dag.addSessionToProject(project.id, 's1');

    const snapshot = await service.beforeTurn('s1');
    expect(snapshot?.shadowBefore).toMatch(/^[0-9a-f]{40}$/);
    const u1 = await dag.appendNode({ id: 'u1', session_id: 's1', role: 'user', content: 'edit', created_at: ++clock });
    await dag.appendNode({
      id: 'a1',
      session_id: 's1',
      role: 'assistant',
      content: 'done',
      predecessor: u1.id,
      created_at: ++clock,
    });
    await judge.write(join(workdir, 'keep.txt'), 'after\n');
    await judge.write(join(workdir, 'new.txt'), 'new\n');
    service.notify('s1', { touchedPaths: ['keep.txt'], snapshot });
    await service.drain();

    const actions = createActions({ dag, mirror, projects: dag, turnFiles: projectGit });
    const listed = await actions.handle({ action: 'list_turn_files', params: { session_id: 's1', turn: 1 } });
    expect(listed).toMatchObject({
      ok: true,
      result: {
        project_id: project.id,
        files: [
          { path: 'keep.txt', status: 'modified', added: 1, removed: 1, by: 'tools' },
          { path: 'new.txt', status: 'added', added: 1, removed: 0, by: 'other' },
        ],
      },
    });
    // Linked both ways: the snapshot names the session commit; the turn's ref names the snapshot.
    const sessionHead = (await judge.git(mirror.repoPath('s1'), 'rev-parse', 'HEAD')).trim();
    const repo = await ShadowRepository.open({ root: join(base, 'shadow'), workdir });
    const shadow = (...args: string[]) => judge.git(workdir, `--git-dir=${join(repo.dir, 'git')}`, ...args);
    const after = (await shadow('rev-parse', turnRef('s1', 1, 'after'))).trim();
    expect(await shadow('log', '-1', '--format=%(trailers:key=Session-Commit,valueonly)', after)).toBe(
      `${sessionHead}\n\n`,
    );
    expect(await judge.git(mirror.repoPath('s1'), 'log', '-1', '--format=%(trailers:key=Turn,valueonly)')).toContain(
      '1',
    );

    const diff = await actions.handle({
      action: 'turn_file_diff',
      params: { session_id: 's1', turn: 1, path: 'new.txt' },
    });
    expect(diff).toMatchObject({ ok: true, result: { path: 'new.txt' } });
    expect((diff as { result: { diff: string } }).result.diff).toContain('+new\n');
    const restored = await actions.handle({ action: 'restore_turn_files', params: { session_id: 's1', turn: 1 } });
    expect(restored).toMatchObject({ ok: true, result: { paths: ['keep.txt', 'new.txt'], skipped: [] } });
    expect(await fsp.readFile(join(workdir, 'keep.txt'), 'utf8')).toBe('before\n');
    expect(await fsp.readdir(workdir)).toEqual(['keep.txt']);
    const undo = await actions.handle({
      action: 'undo_restore_turn_files',
      params: { session_id: 's1', restored: (restored as { result: { restored: string } }).result.restored },
    });
    expect(undo).toMatchObject({ ok: true, result: { paths: ['keep.txt', 'new.txt'] } });
    expect(await fsp.readFile(join(workdir, 'new.txt'), 'utf8')).toBe('new\n');
    expect(await actions.handle({ action: 'list_turn_files', params: { session_id: 's1', turn: 9 } })).toMatchObject({
      ok: false,
      error: { code: 'SNAPSHOT_NOT_FOUND' },
    });
    await service.close();
  });
});
