import { openRepo, type Repo, type RepoContext, repoFile, repositoryContext } from '@entity-git/core/repository';
import type { LockOptions, Storage } from '@entity-git/git';
import { Connection } from './connection.js';
import { defineRemote, type Remote, type RemoteOptions } from './remote.js';

/** Where session repositories are, locally and on the host: what push, fetch, restore and the scheduler take. */
export interface RemoteTarget {
  /** The git host (see {@link defineRemote}). */
  remote: Remote | RemoteOptions;
  /** The storage adapter the mirror uses (`nodeStorage()`, the browser's, …). */
  storage: Storage;
  /** The mirror's root: session repositories are `<root>/<idSegment(session)>/`. */
  root: string;
  /**
   * The ref and index locks, as the mirror's `lock` option: how long one someone else holds is
   * waited for, and when one left by a killed writer is taken over. Default `LOCK_DEFAULTS.ref`
   * (5 s, 30 s).
   */
  lock?: Partial<LockOptions>;
}

/** The repository layer's context of a target (root and locks checked once). */
export function targetContext(t: RemoteTarget): RepoContext {
  return repositoryContext({ storage: t.storage, root: t.root, lock: t.lock });
}

/** One session's repository, locally and on the host: what a push or a fetch works on. */
export interface SessionTarget {
  readonly sessionId: string;
  readonly remote: Remote;
  readonly ctx: RepoContext;
  readonly repo: Repo;
  /** The repository's URL on the host, as the transport uses it (messages show `conn.safeUrl`). */
  readonly url: string;
  /** The transport's callbacks for this one operation. */
  readonly conn: Connection;
}

/** Open `sessionId`'s target: the remote validated, the repository opened (whether or not it exists yet). */
export function openTarget(t: RemoteTarget, sessionId: string): SessionTarget {
  const remote = defineRemote(t.remote);
  const ctx = targetContext(t);
  const repo = openRepo(ctx, sessionId);
  const url = remote.urlFor(sessionId);
  return { sessionId, remote, ctx, repo, url, conn: new Connection(remote, url) };
}

const branchOrder = (a: string, b: string) => (a === 'main' ? -1 : b === 'main' ? 1 : a < b ? -1 : a > b ? 1 : 0);

/** Every branch of the local repository with its tip, `main` first, read without a lock (refs move by rename). */
export async function localBranches(repo: Repo): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const name of (await repo.refs.branches()).sort(branchOrder)) {
    const oid = await repo.refs.resolve(`refs/heads/${name}`);
    if (oid !== null) out.set(name, oid);
  }
  return out;
}

/**
 * Run `fn` holding the target's remote lock, `.git/entity-git-remote.lock`: it serializes the
 * pushes and fetches of one repository (they write remote-tracking refs); a fetch that moves local
 * branches then takes the sync lock inside it (`withRepoLock`), as every sync does.
 */
export function withRemoteLock<T>(t: SessionTarget, fn: () => Promise<T>): Promise<T> {
  return t.ctx.store.lock(repoFile(t.repo.gitdir, 'remote.lock'), fn);
}
