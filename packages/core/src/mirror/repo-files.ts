import { joinPath, type Store } from '@entity-git/git';

/**
 * entity-git's own files in a session repository: plain files at the root of `.git`, each named
 * `entity-git-…`, so they cost no directory of their own (a directory is a 4 KB block, as much as
 * the whole state of a short session). Versions before this one kept them in `.git/entity-git/`
 * (`state.json`, `state.jsonl`, `state.<k>.jsonl`, `sync.lock`, `remote.lock`, `pack.lock`):
 * {@link LEGACY_DIR} names that directory, read once by the state cache and emptied.
 */
export const REPO_FILE_PREFIX = 'entity-git-';

/** The directory where versions before the flat layout kept the state and the locks. */
export const LEGACY_DIR = 'entity-git';

/** `.git/entity-git-<name>` (the flat layout). */
export const repoFile = (gitdir: string, name: string): string => joinPath(gitdir, `${REPO_FILE_PREFIX}${name}`);

/** `.git/entity-git/<name>` (the layout before). */
export const legacyRepoFile = (gitdir: string, name: string): string => joinPath(gitdir, LEGACY_DIR, name);

/** The lock every sync of a repository takes (`.git/entity-git-sync.lock`); branches move only under it. */
export const syncLockPath = (gitdir: string): string => repoFile(gitdir, 'sync.lock');

/**
 * Run `fn` holding the repository lock `name` (`sync.lock`, `remote.lock`) under both its names:
 * the flat one, then the one an earlier version takes (`.git/entity-git/<name>`), so a process of
 * that version and this one never both hold it during an upgrade (each of them holds the old
 * name while it works). The old name's directory, which its lock file needs on file-based
 * storages, is removed again once empty, so a repository keeps no directory for it between syncs.
 * Costs a lock file and a directory more per sync on Node (microseconds beside a turn).
 */
export function withRepoLock<T>(store: Store, gitdir: string, name: string, fn: () => Promise<T>): Promise<T> {
  return store.lock(repoFile(gitdir, name), async () => {
    try {
      return await store.lock(legacyRepoFile(gitdir, name), fn);
    } finally {
      await removeLegacyDir(store, gitdir);
    }
  });
}

/**
 * Remove `.git/entity-git/` if it is there and empty (an older process may be using it: then it
 * stays). Looked at first, so a storage whose locks are names, not files, writes nothing here
 * (a read-only holder such as verify then has nothing to save).
 */
export async function removeLegacyDir(store: Store, gitdir: string): Promise<void> {
  const dir = joinPath(gitdir, LEGACY_DIR);
  try {
    if ((await store.lstat(dir))?.isDirectory()) await store.fs.rmdir(dir);
  } catch {
    // absent (nothing to remove), or not empty (an older process's lock or state): left alone
  }
}
