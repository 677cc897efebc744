// Where the project auto-commit keeps its locks and pending journals: a directory of the user's own
// that no one else can write in. The journal decides which paths are "the agent's" after a crash,
// and it names the project, the session and the start of the user's message: a predictable folder
// in the shared temp directory, which another local user could create first, is never used.
import { lstat, mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { EntityGitError } from '@entity-git/git';

/**
 * `$XDG_RUNTIME_DIR/entity-git/projects` when the variable names an absolute directory (private to
 * the user by the XDG rules, and emptied at log-out, as locks should be), else
 * `$XDG_CACHE_HOME/entity-git/projects`, else `~/.cache/entity-git/projects`.
 */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime !== undefined && isAbsolute(runtime)) return join(runtime, 'entity-git', 'projects');
  const cache =
    env.XDG_CACHE_HOME !== undefined && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(cache, 'entity-git', 'projects');
}

const unsafe = (dir: string, why: string, data: Record<string, unknown> = {}): never => {
  throw new EntityGitError(
    'UNSAFE_DIRECTORY',
    `[project] ${dir} ${why}: entity-git keeps its locks and journals only in a directory of yours no one else can write in`,
    {
      dir,
      ...data,
    },
  );
};

const checked = new Set<string>();

/**
 * Makes `dir` (mode 0700, parents too) or checks the one there: a directory, not a link, owned by
 * `uid` (default this process's user), writable by no group or other; else `UNSAFE_DIRECTORY`.
 * Checked once per directory and process.
 */
export async function ensurePrivateDir(dir: string, uid: number | undefined = process.getuid?.()): Promise<void> {
  if (checked.has(dir)) return;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await lstat(dir);
  if (st.isSymbolicLink()) unsafe(dir, 'is a symbolic link');
  if (!st.isDirectory()) unsafe(dir, 'is not a directory');
  if (uid !== undefined && st.uid !== uid) unsafe(dir, `belongs to another user (uid ${st.uid})`, { owner: st.uid });
  if (process.platform !== 'win32' && (st.mode & 0o022) !== 0)
    unsafe(dir, `is writable by others (mode ${(st.mode & 0o777).toString(8)})`, { mode: st.mode & 0o777 });
  if (uid === process.getuid?.()) checked.add(dir);
}
