// create_project on this machine: the workdir is resolved and checked before anything is stored
// or written (no `git init` in /etc, /, the home directory, a folder another project has), and a
// folder outside any repository gets `git init` only when the request asks for it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, renameSync, symlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryDag } from '@entity-git/core';
import { nodeWorkdirPolicy } from '@entity-git/node-fs';
import { importProjectsAction } from '../src/import-projects.js';
import { client, dir, useServer } from './server-helpers.js';

useServer();

const refusal = async (params: Record<string, unknown>) => {
  const r = await client.request('create_project', params);
  return r.ok ? 'created' : `${r.error.code}`;
};

describe('create_project workdirs', () => {
  it('refuses /etc (however spelled), /, the home directory and /tmp with INVALID_WORKDIR; none gets a .git', async () => {
    const hadGit = ['/etc', '/', homedir(), '/tmp'].map((d) => existsSync(join(d, '.git')));
    for (const workdir of ['/tmp/../etc', '/etc', '/', homedir(), '/tmp', '/usr/share'])
      expect([workdir, await refusal({ name: `p ${workdir}`, workdir, init_repo: true })]).toEqual([
        workdir,
        'INVALID_WORKDIR',
      ]);
    expect(['/etc', '/', homedir(), '/tmp'].map((d) => existsSync(join(d, '.git')))).toEqual(hadGit);
    expect(await client.call('list_projects', {})).toEqual({ projects: [] });
  });

  it('a folder in no repository: NOT_A_REPOSITORY and nothing stored; with init_repo, git init', async () => {
    const plain = join(dir, 'plain');
    mkdirSync(plain);
    expect(await refusal({ name: 'Plain', workdir: plain })).toBe('NOT_A_REPOSITORY');
    expect([existsSync(join(plain, '.git')), (await client.call('list_projects', {})).projects]).toEqual([false, []]);
    expect(await client.call('create_project', { name: 'Plain', workdir: plain, init_repo: true })).toMatchObject({
      repo: 'created',
      workdir: realpathSync(plain),
    });
    expect(existsSync(join(plain, '.git'))).toBe(true);
  });

  it('a symbolic link is stored resolved: re-pointing it later moves nothing; a second project on that folder is refused', async () => {
    const real = join(dir, 'real-work');
    mkdirSync(real);
    execFileSync('git', ['init', '-q'], { cwd: real });
    const link = join(dir, 'link-work');
    symlinkSync(real, link);
    const p = await client.call('create_project', { name: 'Linked', workdir: link });
    expect(p.workdir).toBe(realpathSync(real));
    renameSync(link, join(dir, 'old-link'));
    symlinkSync(dir, link);
    expect((await client.call('project_detail', { project_id: p.id })).workdir).toBe(realpathSync(real));
    expect(await refusal({ name: 'Again', workdir: real })).toBe('DUPLICATE_PROJECT');
    expect(await refusal({ name: 'Again', workdir: join(dir, 'old-link') })).toBe('DUPLICATE_PROJECT');
  });
});

describe('import_projects workdirs', () => {
  it('every planned workdir goes through the workdir policy: one it refuses is reported and never created', async () => {
    const base = join(dir, 'import-policy');
    for (const r of ['allowed/alpha', 'elsewhere/beta']) execFileSync('git', ['init', '-q', join(base, r)]);
    const projects = new MemoryDag();
    const policy = nodeWorkdirPolicy({ allowedRoots: [join(base, 'allowed')] });
    const action = importProjectsAction(projects, policy);
    const dry = await action({ dir: base });
    expect(
      dry.candidates.map((c) => [c.name, c.status, c.reason?.includes('outside the allowed roots') ?? null]),
    ).toEqual([
      ['alpha', 'new', null],
      ['beta', 'refused', true],
    ]);
    const done = await action({ dir: base, apply: true });
    expect(done.candidates.map((c) => [c.name, c.status])).toEqual([
      ['alpha', 'created'],
      ['beta', 'refused'],
    ]);
    expect((await projects.listProjects()).map((p) => [p.name, p.workdir])).toEqual([
      ['alpha', realpathSync(join(base, 'allowed/alpha'))],
    ]);
  });
});
