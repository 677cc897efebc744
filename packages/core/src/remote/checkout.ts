import {
  isEntityGitError,
  buildIndex,
  entryFromStat,
  readIndex,
  type IndexEntry,
  parseCommit,
  parseTree,
  acquireLockFile,
  joinPath,
  type Store,
} from '@entity-git/git';
import type { Repo } from './transport.js';

/**
 * Make the working tree and index equal HEAD's tree, as the mirror's own checkout does after a
 * sync (same index entries: a later sync then finds nothing to change). Runs under the session
 * lock; the working tree of a session repository is the mirror's, never a person's, so files are
 * simply written. Returns whether anything changed.
 */
export async function checkoutHead(store: Store, repo: Repo, lockTimeoutMs: number): Promise<boolean> {
  const target = new Map<string, { oid: string; mode: number }>();
  const tip = await repo.refs.resolve('HEAD');
  if (tip !== null) {
    const walk = async (tree: string, prefix: string): Promise<void> => {
      for (const e of parseTree(await repo.objects.readTyped(tree, 'tree'))) {
        if (e.mode === '40000') await walk(e.oid, `${prefix}${e.name}/`);
        else if (e.mode === '100644' || e.mode === '100755')
          target.set(prefix + e.name, { oid: e.oid, mode: e.mode === '100755' ? 0o100755 : 0o100644 });
      }
    };
    await walk(parseCommit(await repo.objects.readTyped(tip, 'commit')).tree, '');
  }
  const indexPath = joinPath(repo.gitdir, 'index');
  let current: IndexEntry[] = [];
  let rewriteAll = false;
  const data = await store.read(indexPath);
  if (data !== null) {
    try {
      current = (await readIndex(store, repo.gitdir, data))!.entries;
    } catch (err) {
      if (!isEntityGitError(err, 'REPO_CORRUPT')) throw err;
      rewriteAll = true;
    }
  }
  const byPath = new Map(current.map((e) => [e.path, e]));
  let changed = rewriteAll || (data === null && target.size > 0);
  const next: IndexEntry[] = [];
  for (const [path, { oid, mode }] of target) {
    const cur = byPath.get(path);
    if (!rewriteAll && cur !== undefined && cur.oid === oid && cur.mode === mode) {
      next.push(cur);
      continue;
    }
    const file = joinPath(repo.dir, path);
    await store.writeCreatingParent(file, await repo.objects.readTyped(oid, 'blob'));
    next.push({ ...entryFromStat(path, oid, await store.fs.lstat(file)), mode });
    changed = true;
  }
  for (const e of current) {
    if (!target.has(e.path)) {
      await store.remove(joinPath(repo.dir, e.path));
      changed = true;
    }
  }
  if (!changed) return false;
  const lock = `${indexPath}.lock`;
  await acquireLockFile(store, lock, buildIndex(next, store.codec), { timeoutMs: lockTimeoutMs, staleMs: 30_000 });
  try {
    await store.fs.rename(lock, indexPath);
  } catch (err) {
    await store.remove(lock);
    throw store.wrap(err, 'write index', indexPath);
  }
  return true;
}
