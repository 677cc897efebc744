import { writeRepositoryPack, type PackReport, type Store } from '@entity-git/git';
import { META_REF } from '../model/session-meta.js';

/**
 * Pack a session repository: the git package's `writeRepositoryPack` over its branches and its
 * meta ref (the session row's commit, as reachable as a branch's).
 */
export function packSession(store: Store, gitdir: string): Promise<PackReport> {
  return writeRepositoryPack(store, gitdir, [META_REF]);
}
