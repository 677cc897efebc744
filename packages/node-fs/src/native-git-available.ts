import { execFileSync } from 'node:child_process';

/** git 2.29 added `rev-parse --show-object-format`; older binaries are passed over for the object engine. */
const MIN_VERSION = [2, 29] as const;

let found: boolean | undefined;

/** Whether a usable git (≥ 2.29) is on PATH, asked once per process. */
export function nativeGitAvailable(gitPath = 'git'): boolean {
  if (found !== undefined && gitPath === 'git') return found;
  let ok = false;
  try {
    const out = execFileSync(gitPath, ['--version'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 10_000,
      windowsHide: true,
    });
    const m = /(\d+)\.(\d+)/.exec(out);
    ok =
      m !== null &&
      (Number(m[1]) > MIN_VERSION[0] || (Number(m[1]) === MIN_VERSION[0] && Number(m[2]) >= MIN_VERSION[1]));
  } catch {
    ok = false;
  }
  if (gitPath === 'git') found = ok;
  return ok;
}
