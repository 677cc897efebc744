import type { DagSource } from '../../dag/dag-source.js';
import { entryFromStat, readIndex, objectId, type RefStore, joinPath, type Store } from '@entity-git/git';
import type { StateCache } from '../repo/state.js';
import type { SessionId } from '../session-id.js';
import { mirrorFiles } from '../worktree-check.js';

/** What {@link unchangedSinceSync} compares. */
export interface UnchangedCheck {
  dag: DagSource;
  states: StateCache;
  repo: { sessionId: SessionId; dir: string; gitdir: string; refs: RefStore };
  /** The storage's working tree, on a storage that has one: a repository with commits must still have its index file. */
  worktree: Store | null;
  /** What the state is recorded under: layout and identity. */
  config: string;
  /**
   * The session's change marker: `read` here (`DagSource.changeMarker`), or `given` as the caller
   * read it (`null`: the source keeps none for the session, so the answer is false).
   */
  marker: { read: true } | { given: string | null };
}

/**
 * The fast path of a start-up check: true when the session's DAG provably did not change since
 * the last sync that made its repository equal to it — the source's change marker equals the one
 * that sync recorded — and the repository's refs are where that sync left them (every recorded
 * tip, and HEAD's branch), under the same `config` (layout and identity: a mirror of another
 * config writes other ids). Reads the marker (unless the caller read it already: from
 * `DagSource.changeMarkers`), the end of the state log and the refs: a few small reads whatever
 * the session's length.
 *
 * What it does not read: objects, the index's entries, the working tree. A repository damaged
 * below its refs (an object file removed, a pack corrupted) passes; the full check (`verify
 * --full`, `reconcile({ full: true })`) finds it. With `worktree` (a storage with a working tree),
 * a repository with commits must still have its index file. False, never an error, whenever anything is missing or
 * unreadable: the caller then does the full check, which reports what is wrong.
 */
export async function unchangedSinceSync(o: UnchangedCheck): Promise<boolean> {
  const { dag, states, repo, worktree, config } = o;
  if ('read' in o.marker && dag.changeMarker === undefined) return false;
  try {
    const recorded = await states.recorded(repo.gitdir, config);
    if (recorded === null) return false;
    const marker = 'given' in o.marker ? o.marker.given : await dag.changeMarker!(repo.sessionId);
    if (marker === null || marker !== recorded.marker) return false;
    const tips = Object.entries(recorded.tips);
    for (const [branch, tip] of tips) if ((await repo.refs.resolve(`refs/heads/${branch}`)) !== tip) return false;
    if (worktree !== null && tips.length > 0 && !(await worktreeAsIndexed(worktree, repo.dir, repo.gitdir)))
      return false;
    return recorded.head === null || (await repo.refs.headBranch()) === recorded.head;
  } catch {
    return false;
  }
}

/**
 * Whether the mirror's files in the working tree (`meta.json`, `messages/…`) are, by their stat,
 * what the index says the last checkout wrote — git status's own test, without reading a file:
 * each indexed file's size, mtime and inode equal its entry, and no file is there that the index
 * lacks. A file whose mtime is not older than the index is "racy" (git's term: it may have changed
 * in the clock tick the index was written): its bytes are hashed instead. False sends the caller to the full check, which reads
 * the bytes (a file edited or removed by hand is damage `verify` must see).
 */
async function worktreeAsIndexed(store: Store, dir: string, gitdir: string): Promise<boolean> {
  const indexStat = await store.lstat(joinPath(gitdir, 'index'));
  if (indexStat === null) return false;
  const index = await readIndex(store, gitdir);
  if (index === null) return false;
  const mine = index.entries.filter((e) => e.path === 'meta.json' || e.path.startsWith('messages/'));
  const indexTime = entryFromStat('', '', indexStat);
  const u32 = (n: number) => n >>> 0;
  for (const e of mine) {
    const st = await store.lstat(joinPath(dir, e.path));
    if (st === null || !st.isFile()) return false;
    const now = entryFromStat(e.path, e.oid, st);
    if (
      u32(now.size) !== u32(e.size) ||
      u32(now.ino) !== u32(e.ino) ||
      now.mtimeSec !== e.mtimeSec ||
      now.mtimeNsec !== e.mtimeNsec
    )
      return false;
    // Racy: written in the clock tick the index was (a checkout writes both within milliseconds),
    // so an edit in that tick could keep the stat. Its bytes are hashed instead, as git does.
    if (
      now.mtimeSec > indexTime.mtimeSec ||
      (now.mtimeSec === indexTime.mtimeSec && now.mtimeNsec >= indexTime.mtimeNsec)
    ) {
      const bytes = await store.read(joinPath(dir, e.path));
      if (bytes === null || objectId(store.codec, 'blob', bytes) !== e.oid) return false;
    }
  }
  const present = await mirrorFiles(store, dir, new Map(mine.map((e) => [e.path, true])));
  return present.length === mine.length;
}
