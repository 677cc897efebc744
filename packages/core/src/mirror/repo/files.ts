import { joinPath, type Store } from '@entity-git/git';

/**
 * entity-git's own files in a session repository: plain files at the root of `.git`, each named
 * `entity-git-…`, so they cost no directory of their own (a directory is a 4 KB block, as much as
 * the whole state of a short session). A process of an older version keeps them in
 * `.git/entity-git/` (`state.json`, `state.jsonl`, `state.<k>.jsonl`, `sync.lock`, `remote.lock`,
 * `pack.lock`): {@link LEGACY_DIR} names that directory, which the state cache reads once and
 * empties, so a repository such a process wrote keeps its state and its locks hold against it.
 */
export const REPO_FILE_PREFIX = 'entity-git-';

/** The directory where a process of an older version keeps the state and the locks. */
export const LEGACY_DIR = 'entity-git';

/** `.git/entity-git-<name>` (the flat layout). */
export const repoFile = (gitdir: string, name: string): string => joinPath(gitdir, `${REPO_FILE_PREFIX}${name}`);

/** `.git/entity-git/<name>` (an older process's layout). */
export const legacyRepoFile = (gitdir: string, name: string): string => joinPath(gitdir, LEGACY_DIR, name);

/** The lock every sync of a repository takes (`.git/entity-git-sync.lock`); branches move only under it. */
export const syncLockPath = (gitdir: string): string => repoFile(gitdir, 'sync.lock');

/** Whether `err` (or what caused it) is a file operation that found a directory (EISDIR). */
function metDirectory(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== null && typeof e === 'object' && depth < 5; depth++) {
    if ((e as { code?: unknown }).code === 'EISDIR') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Run `fn` holding the repository lock `name` (`sync.lock`), so that a process of a version before
 * the flat layout, which takes `.git/entity-git/<name>`, and this one never both hold it during
 * an upgrade:
 * - where locks are files (Node), `.git/entity-git` is held as a lock file of its own while `fn`
 *   runs: an older process cannot create its lock inside it (`ENOTDIR`), so its sync fails and is
 *   retried later, never runs beside this one. Where `.git/entity-git/` is still a directory (an
 *   older process's lock, or its state not yet moved), its old lock is taken instead and the
 *   directory removed once empty. A lock file is used, not a directory: measured, a file and its
 *   removal cost a sync far less than a directory made and removed.
 * - where locks are names (the browser's Web Locks, the in-process mutex), the old name is held
 *   too: nothing is written for it.
 */
export function withRepoLock<T>(store: Store, gitdir: string, name: string, fn: () => Promise<T>): Promise<T> {
  const key = repoFile(gitdir, name);
  return store.lock(key, async () => {
    const legacy = () => store.lock(legacyRepoFile(gitdir, name), fn);
    if ((await store.lstat(key)) === null) return legacy();
    const fence = joinPath(gitdir, LEGACY_DIR);
    for (;;) {
      if ((await store.lstat(fence))?.isDirectory()) {
        try {
          return await legacy();
        } finally {
          await removeLegacyDir(store, gitdir);
        }
      }
      let entered = false;
      try {
        return await store.lock(fence, () => {
          entered = true;
          return fn();
        });
      } catch (err) {
        // An older process made its directory between the look and the lock: take its lock. Or it
        // made it and removed it again meanwhile (a packer's lock): the attempt met a directory,
        // and the next look finds none.
        if (entered || (!(await store.lstat(fence))?.isDirectory() && !metDirectory(err))) throw err;
      }
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
