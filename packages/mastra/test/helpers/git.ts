import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function git(repo: string, ...args: string[]): string {
  return execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

const dirs: string[] = [];
/** A new temporary directory, removed by {@link cleanupDirs}. */
export function tempDir(prefix = 'eg-mastra-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}
export async function cleanupDirs(): Promise<void> {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

/** `branch → commit id` of a repository, as native git lists them. */
export function refs(repo: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of git(repo, 'for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads').split('\n')) {
    if (line === '') continue;
    const [name, oid] = line.split(' ');
    out[name!] = oid!;
  }
  return out;
}

export const commitCount = (repo: string, rev: string): number => Number(git(repo, 'rev-list', '--count', rev).trim());
export const files = (repo: string, rev: string): string[] =>
  git(repo, 'ls-tree', '-r', '--name-only', rev).trim().split('\n');
export const message = (repo: string, rev: string): string => git(repo, 'log', '-1', '--format=%B', rev);
export const headBranch = (repo: string): string => git(repo, 'symbolic-ref', '--short', 'HEAD').trim();

/** `git fsck --strict` prints nothing and exits 0, and the working tree is clean. */
export function judged(repo: string): { fsck: string; status: string } {
  const fsck = execFileSync('git', ['-C', repo, 'fsck', '--strict', '--no-progress'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { fsck, status: git(repo, 'status', '--porcelain') };
}

/** Every path under `dir`, recursively, sorted. */
export function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true }).map(String).sort();
}
