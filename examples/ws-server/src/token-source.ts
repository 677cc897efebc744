// Where the server's token comes from when the user picks it: an environment variable or a file
// only the user can read. Never argv: `/proc/<pid>/cmdline` is readable by every local user.
import { EntityGitError } from '@entity-git/core';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

/** The environment variable read for the token (and removed, so no child process inherits it). */
export const TOKEN_ENV = 'ENTITY_GIT_TOKEN';

const refuse = (file: string, why: string): never => {
  throw new EntityGitError('INVALID_OPTION', `[ws-server] the token file ${JSON.stringify(file)} ${why}`, { file });
};

/**
 * The token in `file` (its first line, trimmed): a regular file, not a link, owned by this user
 * and readable by no one else (mode `0600` or `0400`); anything else is `INVALID_OPTION`.
 */
export async function readTokenFile(file: string): Promise<string> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW).catch((err: NodeJS.ErrnoException) =>
    refuse(file, err.code === 'ELOOP' ? 'is a symbolic link' : `cannot be opened (${err.code ?? err.message})`),
  );
  try {
    const st = await handle.stat();
    if (!st.isFile()) refuse(file, 'is not a regular file');
    if (process.getuid !== undefined && st.uid !== process.getuid()) refuse(file, 'belongs to another user');
    if ((st.mode & 0o077) !== 0)
      refuse(file, `is readable or writable by others (mode ${(st.mode & 0o777).toString(8)}): chmod 600 it`);
    const token = (await handle.readFile('utf8')).split('\n')[0]!.trim();
    if (token === '') refuse(file, 'is empty');
    return token;
  } finally {
    await handle.close();
  }
}

/** The user's token: `--token-file` when given, else {@link TOKEN_ENV} (then deleted from `env`); undefined for none. */
export async function userToken(
  file: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  const fromEnv = env[TOKEN_ENV];
  delete env[TOKEN_ENV];
  if (file !== undefined) return readTokenFile(file);
  return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
}
