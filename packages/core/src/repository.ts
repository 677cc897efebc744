// `@entity-git/core/repository`: the session repository layer the mirror is built on, for the
// packages built on core (push, fetch and restore in @entity-git/remote): one way to open, make,
// lock and check out a session repository, so that what a fetch makes is what a sync would.
// Not for applications: they use the mirror (`createMirror`).
import { loadOnDemand } from './mirror/load-on-demand.js';
import { createRepoContext, type RepoContext, type RepoContextOptions } from './mirror/repo/context.js';

/** The context of the repository layer over `options` (checked once: root, locks, layout). */
export function repositoryContext(options: RepoContextOptions): RepoContext {
  return createRepoContext(options, loadOnDemand);
}

export { checkRoot, type RepoContext, type RepoContextOptions } from './mirror/repo/context.js';
export { openRepo, openExisting, repoExists, repoPath, type Repo } from './mirror/repo/repo.js';
export { createRepo, adoptRepo } from './mirror/repo/setup.js';
export { CORE_CONFIG } from './mirror/repo/config.js';
export { checkOutTree } from './mirror/sync/checkout.js';
export { repoFile, syncLockPath, withRepoLock } from './mirror/repo/files.js';
export { metaOidOfRef } from './mirror/meta-ref.js';
