// Where an agent tool may touch a file: inside the project's workdir, outside its `.git`, and
// never through a symbolic link. A path's text alone proves nothing: a committed `notes.md` that is
// a link to `~/.bashrc`, or a `docs` link to `.git`, would take a write anywhere the server's user
// can write, or into the repository's config (whose `core.fsmonitor` runs a command).
import { invalidArgument } from '@entity-git/core';
import { lstat, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

const refuse = (path: string, why: string): never =>
  invalidArgument(`the agent's path ${JSON.stringify(path)} is refused: ${why}`, { path, reason: why }) as never;

/**
 * The absolute path an agent tool may use for `path` (relative to `workdir`), or an
 * `INVALID_ARGUMENT` the agent sees, whose message says why: not relative, outside the workdir, in
 * `.git` (any case: case-insensitive file systems), or through a symbolic link (any component that
 * exists is checked with `lstat`; the last one is opened with `O_NOFOLLOW` by the writer).
 */
export async function confinedPath(workdir: string, path: unknown): Promise<string> {
  if (typeof path !== 'string' || path === '' || path.includes('\0'))
    return invalidArgument('an agent tool needs a non-empty relative path', { path });
  if (isAbsolute(path)) return refuse(path, 'it is absolute; tools take paths relative to the workdir');
  const root = await realpath(workdir).catch(() => refuse(path, 'the project workdir cannot be resolved'));
  const rel = relative(root, resolve(root, path));
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    return refuse(path, 'it is outside the project workdir');
  const parts = rel.split(sep);
  if (parts.some((p) => p.toLowerCase() === '.git')) return refuse(path, "it is inside the repository's .git");
  let at = root;
  for (const part of parts) {
    at = join(at, part);
    const st = await lstat(at).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    if (st === null) break;
    if (st.isSymbolicLink()) return refuse(path, `${JSON.stringify(relative(root, at))} is a symbolic link`);
  }
  return join(root, rel);
}
