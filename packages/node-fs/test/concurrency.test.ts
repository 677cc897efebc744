import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from './helpers.js';
import { builtChild } from '@entity-git/test-utils/node-child';

const run = promisify(execFile);
const child = builtChild(join(import.meta.dirname, 'sync-child.ts'));

describe('several processes syncing one session', () => {
  it('serialize on the session lock: every commit written once, no ref conflict, golden ids', async () => {
    const root = tempDir();
    const outs = await Promise.all(
      Array.from({ length: 4 }, () => run(process.execPath, [child, root, '5'], { cwd: process.cwd() })),
    );
    const commits = outs.map((o) => (JSON.parse(o.stdout) as { commits: number }).commits);
    // The golden session has five commits; exactly one process wrote them, the others found them.
    expect(commits.reduce((a, b) => a + b, 0)).toBe(5);
    const dir = join(root, 'golden-1');
    expect(git(dir, 'rev-parse', 'main', 'fork-u4').trim().split('\n')).toEqual([
      '2d6739e6531c79338d437bcd12e6a1911db229f3',
      '17a4c695c75333ca3ac7710e31cd26d953bab6d6',
    ]);
    expect(git(dir, 'reflog', 'show', '--format=%H', 'main').trim().split('\n')).toHaveLength(1);
    expect(git(dir, 'fsck', '--strict')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(git(dir, 'ls-files', '--others', '--exclude-standard')).toBe('');
  });
});
