import { GOLDEN_SESSION } from '@entity-git/test-utils';
import { execFile } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from './helpers.js';
import { builtChild } from '@entity-git/test-utils/node-child';

const run = promisify(execFile);
const child = builtChild(join(import.meta.dirname, 'default-root-child.ts'));
const SID = GOLDEN_SESSION.id;
// The golden session's HEAD branch tip (see golden.test.ts): the same ids wherever the repo lives.
const GOLDEN_HEAD_TIP = '17a4c695c75333ca3ac7710e31cd26d953bab6d6';

async function mirrorIn(
  home: string,
  ...args: string[]
): Promise<{ repoPath: string; head: string; commitsWritten: number }> {
  const { stdout } = await run(process.execPath, [child, ...args], {
    cwd: process.cwd(),
    env: { ...process.env, HOME: home, USERPROFILE: home },
  });
  return JSON.parse(stdout);
}

describe('createNodeMirror root', () => {
  it('defaults to $HOME/.openprogram/sessions/<session id>', async () => {
    const home = realpathSync(tempDir('eg-home-'));
    const out = await mirrorIn(home);
    const repo = join(home, '.openprogram', 'sessions', SID);
    expect(out.repoPath).toBe(repo);
    expect(out.commitsWritten).toBe(5);
    expect(existsSync(join(repo, '.git'))).toBe(true);
    expect(git(repo, 'log', '--format=%H', '-1').trim()).toBe(GOLDEN_HEAD_TIP);
    expect(git(repo, 'rev-parse', '--show-toplevel').trim()).toBe(repo);
    expect(git(repo, 'status', '--porcelain')).toBe('');
  });

  it('writes under the given root instead, and nothing under $HOME', async () => {
    const home = realpathSync(tempDir('eg-home-'));
    const root = realpathSync(tempDir('eg-root-'));
    const out = await mirrorIn(home, root);
    const repo = join(root, SID);
    expect(out.repoPath).toBe(repo);
    expect(git(repo, 'log', '--format=%H', '-1').trim()).toBe(GOLDEN_HEAD_TIP);
    expect(existsSync(join(home, '.openprogram'))).toBe(false);
  });
});
