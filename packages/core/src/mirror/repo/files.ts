import { joinPath, type Store } from '@entity-git/git';

/**
 * entity-git's own files in a session repository: plain files at the root of `.git`, each named
 * `entity-git-…`, so they cost no directory of their own (a directory is a 4 KB block, as much as
 * the whole state of a short session).
 */
export const REPO_FILE_PREFIX = 'entity-git-';

/** `.git/entity-git-<name>` (the flat layout). */
export const repoFile = (gitdir: string, name: string): string => joinPath(gitdir, `${REPO_FILE_PREFIX}${name}`);

/** The lock every sync of a repository takes (`.git/entity-git-sync.lock`); branches move only under it. */
export const syncLockPath = (gitdir: string): string => repoFile(gitdir, 'sync.lock');

/** Run `fn` holding the repository lock `name` (`sync.lock`: `.git/entity-git-sync.lock`). */
export function withRepoLock<T>(store: Store, gitdir: string, name: string, fn: () => Promise<T>): Promise<T> {
  return store.lock(repoFile(gitdir, name), fn);
}
