import { packRepository as packWithRefs, type PackReport, type Store } from '@entity-git/git';
import { META_REF } from '../model/session-meta.js';

/**
 * Pack a session repository: the git package's `packRepository` over its branches and its meta
 * ref (the session row's commit, as reachable as a branch's).
 */
export function packRepository(store: Store, gitdir: string): Promise<PackReport> {
  return packWithRefs(store, gitdir, [META_REF]);
}
