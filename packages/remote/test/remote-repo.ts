// A session's repository as the remote tests look inside it: opened by the repository layer, on
// the tests' storage.
import { openRepo, type Repo, repositoryContext } from '@entity-git/core/repository';
import type { Store } from '@entity-git/git';
import { storage } from './remote-helpers.js';

/** `sessionId`'s repository under `root`, on the tests' storage (whose one Store `store` must be). */
export function repoOf(store: Store, root: string, sessionId: string): Repo {
  const ctx = repositoryContext({ storage, root });
  if (ctx.store !== store) throw new Error("repoOf: `store` is not the Store of the tests' storage");
  return openRepo(ctx, sessionId);
}
