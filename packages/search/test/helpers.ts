import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryDag, type SearchHit } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { writeGolden } from '@entity-git/test-utils';
import { afterEach, expect } from 'vitest';
import { SearchIndex, THREAD_WARNING, type SearchIndexOptions } from '../src/index.js';

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

/** The write thread's failures this process was warned of (`THREAD_WARNING`), oldest first: a test that expects one takes it. */
export const threadWarnings: string[] = [];
process.on('warning', (w) => {
  if ((w as Error & { code?: string }).code === THREAD_WARNING) threadWarnings.push(w.message);
});

/**
 * For a test file: opens an index on `root` (with any other option), closed after the test that
 * opened it; a test whose index's write thread failed unexpectedly fails.
 */
export function indexOpener(): (root: string, options?: Omit<SearchIndexOptions, 'root'>) => SearchIndex {
  const open: SearchIndex[] = [];
  afterEach(() => {
    for (const i of open.splice(0)) i.close();
    expect(threadWarnings.splice(0)).toEqual([]);
  });
  return (root, options = {}) => {
    const index = new SearchIndex({ root, ...options });
    open.push(index);
    return index;
  };
}

/** Golden sessions synced into a new root, their last reply filled in the DAG since (the next sync commits it). */
export async function goldens(...ids: string[]) {
  const dag = new MemoryDag();
  for (const sessionId of ids) await writeGolden(dag, { sessionId });
  const root = tempDir();
  const mirror = createNodeMirror({ dag, root });
  for (const id of ids) await mirror.sync(id);
  for (const id of ids) await dag.fillNode(id, 'a6', 'Fixed all three.', null);
  return { dag, root, mirror };
}

/** A user message and its reply appended to `session`'s main line after `after`. */
export async function addTurn(
  dag: MemoryDag,
  session: string,
  after: string,
  id: string,
  words: string,
): Promise<void> {
  await dag.appendNode({
    id: `${id}u`,
    session_id: session,
    role: 'user',
    content: `Ask ${words}?`,
    predecessor: after,
  });
  await dag.appendNode({
    id: `${id}a`,
    session_id: session,
    role: 'assistant',
    content: `Answer ${words}.`,
    predecessor: `${id}u`,
  });
}

/** `live` holds what an index rebuilt from the repositories under `root` holds. */
export async function expectEqualToReindex(
  open: ReturnType<typeof indexOpener>,
  root: string,
  live: SearchIndex,
): Promise<void> {
  const rebuilt = open(root, { file: join(tempDir(), 'rebuilt.db') });
  await rebuilt.reindex();
  expect(live.contents()).toEqual(rebuilt.contents());
}
