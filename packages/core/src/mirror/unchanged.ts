import type { DagSource } from '../dag/dag-source.js';
import type { RefStore } from '../git/refs.js';
import { joinPath, type Store } from '../storage/store.js';
import type { StateCache } from './repo-state.js';

/**
 * The fast path of a start-up check (issue 22): true when the session's DAG provably did not
 * change since the last sync that made its repository equal to it — the source's change marker
 * equals the one that sync recorded — and the repository's refs are where that sync left them
 * (every recorded tip, and HEAD's branch), under the same `config` (layout and identity: a
 * mirror of another config writes other ids). Reads the marker, the end of the state log and the
 * refs: a few small reads whatever the session's length.
 *
 * What it does not read: objects, the index's entries, the working tree. A repository damaged
 * below its refs (an object file removed, a pack corrupted) passes; the full check (`verify
 * --full`, `reconcile({ full: true })`) finds it. With `worktree` (a storage with a working tree),
 * a repository with commits must still have its index file. False, never an error, whenever anything is missing or
 * unreadable: the caller then does the full check, which reports what is wrong.
 */
export async function unchangedSinceSync(dag: DagSource, states: StateCache, repo: { gitdir: string; refs: RefStore }, sessionId: string, worktree: Store | null, config: string): Promise<boolean> {
  if (dag.changeMarker === undefined) return false;
  try {
    const recorded = await states.recorded(repo.gitdir, config);
    if (recorded === null) return false;
    const marker = await dag.changeMarker(sessionId);
    if (marker === null || marker !== recorded.marker) return false;
    const tips = Object.entries(recorded.tips);
    for (const [branch, tip] of tips) if ((await repo.refs.resolve(`refs/heads/${branch}`)) !== tip) return false;
    if (worktree !== null && tips.length > 0 && (await worktree.lstat(joinPath(repo.gitdir, 'index'))) === null) return false;
    return recorded.head === null || (await repo.refs.headBranch()) === recorded.head;
  } catch {
    return false;
  }
}
