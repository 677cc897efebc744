// What native git says about the session repositories the app-database tests make.
import { execFileSync } from 'node:child_process';
import type { DagSource } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd },
  }).replace(/\n$/, '');
}

/** A branch as native git sees it: its tip, its commits (oldest first) and the files at its tip. */
export interface BranchFacts {
  tip: string;
  commits: number;
  files: string[];
  /** The message of each commit, oldest first. */
  messages: string[];
}

/** Every branch of a repository, and the branch HEAD names. */
export function repoFacts(repo: string): { head: string; branches: Record<string, BranchFacts> } {
  const branches: Record<string, BranchFacts> = {};
  for (const name of git(repo, 'for-each-ref', '--format=%(refname:short)', 'refs/heads').split('\n')) {
    if (name === '') continue;
    const shas = git(repo, 'rev-list', '--first-parent', '--reverse', name).split('\n');
    branches[name] = {
      tip: git(repo, 'rev-parse', name),
      commits: shas.length,
      files: git(repo, 'ls-tree', '-r', '--name-only', name).split('\n'),
      messages: shas.map((sha) => git(repo, 'log', '-1', '--format=%B', sha).trimEnd()),
    };
  }
  return { head: git(repo, 'symbolic-ref', '--short', 'HEAD'), branches };
}

/** The refs of a repository (branches, HEAD's branch, the meta ref): what two mirrors must agree on. */
export function refsOf(repo: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of git(repo, 'for-each-ref', '--format=%(refname) %(objectname)').split('\n')) {
    const [ref, sha] = line.split(' ');
    if (ref) out[ref] = sha!;
  }
  out.HEAD = git(repo, 'symbolic-ref', 'HEAD');
  return out;
}

/** `git fsck --strict` finds nothing and the working tree is clean. */
export function assertHealthy(repo: string): void {
  git(repo, 'fsck', '--strict', '--no-dangling');
  const status = git(repo, 'status', '--porcelain');
  if (status !== '') throw new Error(`git status in ${repo} is not clean:\n${status}`);
}

/** A fresh backfill of every session of `dag` into `root`. */
export async function backfill(dag: DagSource, root: string): Promise<void> {
  const mirror = createNodeMirror({ dag, root });
  for (const id of await dag.listSessions()) await mirror.sync(id);
}
