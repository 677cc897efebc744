// nodeWorkdirPolicy: what may become a project's workdir, resolved through links and refused with
// a typed reason, on real directories.
import { chownSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Project } from '@entity-git/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeWorkdirPolicy } from '../src/index.js';

let dir = '';
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'eg-workdir-')));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const reason = (p: Promise<string>) =>
  p.then(
    (path) => `ok ${path}`,
    (err: { code?: string; data?: { reason?: string } }) => `${err.code} ${err.data?.reason}`,
  );
const project = (workdir: string): Project => ({
  id: 'p1',
  name: 'P',
  workdir,
  status: 'active',
  description: null,
  created_at: 0,
  sessions: [],
});

describe('nodeWorkdirPolicy', () => {
  it('refuses the root, the home directory, system and shared directories, missing paths and files', async () => {
    const policy = nodeWorkdirPolicy();
    writeFileSync(join(dir, 'file'), 'x');
    const cases = [
      '/',
      homedir(),
      '/etc',
      '/tmp/../etc',
      '/usr/lib',
      tmpdir(),
      '/var/tmp',
      join(dir, 'missing'),
      join(dir, 'file'),
    ];
    const got = await Promise.all(cases.map((c) => reason(policy(c, []))));
    expect(got).toEqual([
      'INVALID_WORKDIR file-system-root',
      'INVALID_WORKDIR home',
      'INVALID_WORKDIR system-directory',
      'INVALID_WORKDIR system-directory',
      'INVALID_WORKDIR system-directory',
      'INVALID_WORKDIR system-directory',
      'INVALID_WORKDIR system-directory',
      'INVALID_WORKDIR missing',
      'INVALID_WORKDIR not-directory',
    ]);
  });

  it("refuses a folder another user owns (the server's user is given as another uid, and, as root, by chown)", async () => {
    const mine = join(dir, 'mine');
    mkdirSync(mine);
    const owner = statSync(mine).uid;
    expect(await reason(nodeWorkdirPolicy({ uid: owner + 1 })(mine, []))).toBe('INVALID_WORKDIR not-owned');
    expect(await reason(nodeWorkdirPolicy()(mine, []))).toBe(`ok ${mine}`);
    if (process.getuid?.() === 0) {
      chownSync(mine, 65534, 65534);
      expect(await reason(nodeWorkdirPolicy()(mine, []))).toBe('INVALID_WORKDIR not-owned');
    }
  });

  it('resolves links, keeps to the allowed roots, and refuses another project’s workdir', async () => {
    const roots = join(dir, 'projects');
    const inside = join(roots, 'a');
    const outside = join(dir, 'b');
    mkdirSync(inside, { recursive: true });
    mkdirSync(outside);
    symlinkSync(outside, join(roots, 'sneaky'));
    const policy = nodeWorkdirPolicy({ allowedRoots: [roots] });
    expect(await reason(policy(inside, []))).toBe(`ok ${inside}`);
    expect(await reason(policy(join(roots, 'sneaky'), []))).toBe('INVALID_WORKDIR outside-allowed-roots');
    expect(await reason(policy(outside, []))).toBe('INVALID_WORKDIR outside-allowed-roots');
    symlinkSync(inside, join(dir, 'to-a'));
    expect(await reason(policy(join(dir, 'to-a'), []))).toBe(`ok ${inside}`);
    expect(await reason(policy(join(dir, 'to-a'), [project(inside)]))).toBe('DUPLICATE_PROJECT workdir');
  });
});
