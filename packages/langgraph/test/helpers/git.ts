import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function git(repo: string, ...args: string[]): string {
  return execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

const dirs: string[] = [];
/** A private temp directory, removed by {@link removeTempDirs}. */
export function tempDir(prefix = 'eg-langgraph-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}
export async function removeTempDirs(): Promise<void> {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

/** `branch → commit id` as native git lists them. */
export function branches(repo: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of git(repo, 'for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads').split('\n')) {
    if (line === '') continue;
    const [name, oid] = line.split(' ');
    out[name!] = oid!;
  }
  return out;
}

/** Commits on a branch, oldest first: id, committer time, full message. */
export function commits(repo: string, branch: string): Array<{ id: string; time: number; message: string }> {
  const out = git(repo, 'log', '--reverse', '--format=%H %ct%n%B%x00', branch);
  return out
    .split('\0')
    .map((c) => c.replace(/^\n/, ''))
    .filter((c) => c !== '')
    .map((c) => {
      const nl = c.indexOf('\n');
      const [id, time] = c.slice(0, nl).split(' ');
      return { id: id!, time: Number(time), message: c.slice(nl + 1).replace(/\n$/, '') };
    });
}

export const files = (repo: string, rev: string): string[] =>
  git(repo, 'ls-tree', '-r', '--name-only', rev).trim().split('\n');

/** `git fsck --strict` exits 0 and prints nothing (execFileSync throws otherwise). */
export function fsck(repo: string): string {
  return execFileSync('git', ['-C', repo, 'fsck', '--strict', '--no-progress'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
