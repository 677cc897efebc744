import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SearchHit } from '@entity-git/core';

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
  });
}

export const tempDir = (prefix = 'eg-search-'): string => mkdtempSync(join(tmpdir(), prefix));

/** The commit of turn `turn` on `branch`, as native git reads it (first parents, oldest first). */
export function turnCommit(dir: string, branch: string, turn: number): string {
  const ids = git(dir, 'rev-list', '--first-parent', '--reverse', branch).trim().split('\n');
  return ids[turn - 1]!;
}

/** A hit's place, the part tests compare: session, node, branch, branches, turn, role. */
export const placeOf = (h: SearchHit) =>
  `${h.session}/${h.node} ${h.role} ${h.branch}#${h.turn} [${h.branches.join(',')}]`;
