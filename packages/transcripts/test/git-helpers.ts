import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeMirror } from '@entity-git/node-fs';
import { TranscriptDag, type ParsedSession } from '../src/index.js';

export function git(repo: string, ...args: string[]): string {
  return execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

const roots: string[] = [];
export function tempRoot(prefix = 'eg-transcripts-'): string {
  const root = mkdtempSync(join(tmpdir(), prefix));
  roots.push(root);
  return root;
}
export async function cleanupRoots(): Promise<void> {
  await Promise.all(roots.splice(0).map((r) => rm(r, { recursive: true, force: true })));
}

/** Mirrors parsed sessions into a fresh root; returns the root and each repository's path. */
export async function mirrorSessions(
  sessions: readonly ParsedSession[],
  root = tempRoot(),
): Promise<{ root: string; repo: (id: string) => string }> {
  const dag = new TranscriptDag();
  for (const s of sessions) dag.set(s);
  const mirror = createNodeMirror({ dag, root });
  for (const s of sessions) await mirror.sync(s.session.id);
  return { root, repo: (id) => mirror.repoPath(id) };
}

/** `branch → commit id` of a repository, as native git lists them. */
export function refs(repo: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of git(repo, 'for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads')
    .trim()
    .split('\n')) {
    if (line === '') continue;
    const [name, oid] = line.split(' ');
    out[name!] = oid!;
  }
  return out;
}

export const turns = (repo: string, branch: string): number => Number(git(repo, 'rev-list', '--count', branch).trim());
export const files = (repo: string, branch: string): string[] =>
  git(repo, 'ls-tree', '-r', '--name-only', branch).trim().split('\n');

/** `git fsck --strict` must print nothing and exit 0 (execFileSync throws otherwise). */
export function fsck(repo: string): string {
  return execFileSync('git', ['-C', repo, 'fsck', '--strict', '--no-progress'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
