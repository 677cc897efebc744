// `@entity-git/core/repository`: the session repository layer the mirror is built on, for the
// packages built on core (push, fetch and restore in @entity-git/remote): one way to open, make,
// lock and check out a session repository, so that what a fetch makes is what a sync would.
// Not for applications: they use the mirror (`createMirror`).
import { loadOnDemand } from './mirror/load-on-demand.js';
import { createRepoContext, type RepoContext, type RepoContextOptions } from './mirror/repo/context.js';
import {
  openExisting as existingChecked,
  openRepo as openChecked,
  repoPath as pathChecked,
  type Repo,
} from './mirror/repo/repo.js';
import { sessionIdOf } from './mirror/session-id.js';

/** The context of the repository layer over `options` (checked once: root, locks, layout). */
export function repositoryContext(options: RepoContextOptions): RepoContext {
  return createRepoContext(options, loadOnDemand);
}

export { checkRoot, type RepoContext, type RepoContextOptions } from './mirror/repo/context.js';
export { repoExists, type Repo } from './mirror/repo/repo.js';

// Where a session id enters the repository layer from another package: checked here, trusted inside.

/** A session's repository, whether or not it exists yet (`INVALID_ID` for an id no store should hold). */
export function openRepo(ctx: RepoContext, sessionId: string): Repo {
  return openChecked(ctx, sessionIdOf(sessionId));
}

/** A session's repository, which must exist (`SESSION_NOT_FOUND` otherwise). */
export function openExisting(ctx: RepoContext, sessionId: string): Promise<Repo> {
  return existingChecked(ctx, sessionIdOf(sessionId));
}

/** The directory of a session's repository under the context's root. */
export function repoPath(ctx: Pick<RepoContext, 'root'>, sessionId: string): string {
  return pathChecked(ctx, sessionIdOf(sessionId));
}
export { createRepo, adoptRepo } from './mirror/repo/setup.js';
export { CORE_CONFIG } from './mirror/repo/config.js';
export { checkOutTree } from './mirror/sync/checkout.js';
export { repoFile, syncLockPath, withRepoLock } from './mirror/repo/files.js';
export { metaOidOfRef } from './mirror/meta-ref.js';
