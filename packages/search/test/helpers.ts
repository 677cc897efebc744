import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SearchHit } from '@entity-git/core';
import { afterEach } from 'vitest';
import { SearchIndex, type SearchIndexOptions } from '../src/index.js';

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

/** For a test file: opens an index on `root` (with any other option), closed after the test that opened it. */
export function indexOpener(): (root: string, options?: Omit<SearchIndexOptions, 'root'>) => SearchIndex {
  const open: SearchIndex[] = [];
  afterEach(() => {
    for (const i of open.splice(0)) i.close();
  });
  return (root, options = {}) => {
    const index = new SearchIndex({ root, ...options });
    open.push(index);
    return index;
  };
}
