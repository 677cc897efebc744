import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDb, json, run, tempDir, type Run } from './fixture.js';

const dir = tempDir();
const db = join(dir, 'dag.db');
const root = join(dir, 'sessions');
const eg = (...args: string[]) => run(['--db', db, '--root', root, ...args]);
const usage = (stderr: string): Run => ({ code: 2, stdout: '', stderr: `entity-git: ${stderr}\n` });

beforeAll(async () => {
  await buildDb(db);
});

describe('entity-git projects status', () => {
  it("reads a project's status, sets it by name or id, and refuses an unknown status or project", async () => {
    const work = join(dir, 'work');
    mkdirSync(work);
    const created = json(await eg('projects', 'create', 'demo', work, '--json')).project as { id: string };
    expect(await eg('projects', 'status', 'demo')).toEqual({
      code: 0,
      stdout: `project ${created.id} "demo" is active\n`,
      stderr: '',
    });
    expect(await eg('projects', 'status', 'demo', 'paused')).toEqual({
      code: 0,
      stdout: `project ${created.id} "demo": active → paused\n`,
      stderr: '',
    });
    expect(json(await eg('projects', 'status', created.id, 'done', '--json')).project).toMatchObject({
      id: created.id,
      status: 'done',
    });
    expect(json(await eg('projects', 'list', '--json')).projects).toEqual([
      expect.objectContaining({ id: created.id, status: 'done' }),
    ]);
    const [bad, ghost] = await Promise.all([
      eg('projects', 'status', 'demo', 'finished'),
      eg('projects', 'status', 'nope', 'active'),
    ]);
    expect([bad, ghost]).toEqual([
      usage('STATUS must be one of active, paused, done, got "finished"'),
      usage('no project with id or name "nope"'),
    ]);
    // Refused input changed nothing.
    expect(await eg('projects', 'status', 'demo')).toEqual({
      code: 0,
      stdout: `project ${created.id} "demo" is done\n`,
      stderr: '',
    });
  });
});
