import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, lstatSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Run native git in `cwd`; returns stdout (throws with stderr on a non-zero exit). */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd } });
}

export function gitBytes(cwd: string, ...args: string[]): Buffer {
  return execFileSync('git', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
}

export function tempDir(prefix = 'eg-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Every path under `dir`, relative, recursively (directories end in '/'). */
export function listTree(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (lstatSync(full).isDirectory()) out.push(`${prefix}${name}/`, ...listTree(full, `${prefix}${name}/`));
    else out.push(prefix + name);
  }
  return out;
}
