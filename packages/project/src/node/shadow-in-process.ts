// The snapshot the watcher vouches for, taken with no git process: the changed paths' blobs as
// loose objects, the trees along them from the tip's, the commit and the ref (old value checked,
// reflog kept if the ref has one), all through @entity-git/git as the object engine writes them.
// The persistent index is left as it was: it lags behind the tip until the next walk catches it up
// (`INDEX_BEHIND`). Objects first, the mark next, the ref last: a kill anywhere leaves the old tip
// or the new one, over a sound repository. docs/design.md §7, "When a snapshot trusts the watcher".
import { join } from 'node:path';
import { buildCommit, ObjectStore, parseCommit, RefStore, Store } from '@entity-git/git';
import { type SnapshotTrailers, snapshotMessage } from '../shadow-message.js';
import { SHADOW_IDENTITY, SNAPSHOTS_REF } from '../shadow-names.js';
import { slicedNodeStorage, stat, writeNew } from './shadow-sliced-fs.js';
import { FastPlan } from './shadow-fast-plan.js';
import { traced } from './shadow-trace.js';
import type { FastPath } from './shadow-snapshot-state.js';

/**
 * The file beside the shadow git directory that says its index may lag behind the tip (it names
 * the tip the index was left at). Made once: the turns after it find it there and write nothing.
 */
export const INDEX_BEHIND = 'index-behind';

export interface InProcessSnapshot {
  readonly commit: string;
  readonly overSizeCap: readonly string[];
  /** The files over the cap a walk would list again while they stay as they are. */
  readonly listedAgain: readonly string[];
}

export type InProcessResult = InProcessSnapshot | { readonly refused: string };

export class InProcessSnapshots {
  readonly #dir: string;
  readonly #gitDir: string;
  readonly #workdir: string;
  readonly #objects: ObjectStore;
  readonly #refs: RefStore;

  /** `dir`: the project's shadow directory (its git directory is `<dir>/git`). */
  constructor(dir: string, workdir: string) {
    this.#dir = dir;
    this.#gitDir = join(dir, 'git');
    this.#workdir = workdir;
    const store = new Store(slicedNodeStorage);
    this.#objects = new ObjectStore(store, this.#gitDir);
    this.#refs = new RefStore(store, this.#gitDir);
  }

  /** Takes the snapshot the fast path describes, or says why only git can. */
  async take(trailers: SnapshotTrailers, fast: FastPath, maxFileBytes: number): Promise<InProcessResult> {
    const tip = fast.last.tip;
    const tipTree = parseCommit(await traced('tip-commit', () => this.#objects.readTyped(tip, 'commit'))).tree;
    const plan = await traced('plan', () =>
      new FastPlan({
        workdir: this.#workdir,
        gitDir: this.#gitDir,
        objects: this.#objects,
        maxFileBytes,
        tipTree,
        dirs: fast.dirs,
      }).run(fast.paths),
    );
    if ('refused' in plan) return plan;
    const tree = plan.tree;
    const overSizeCap = carriedOver(fast, plan.overSizeCap);
    const listedAgain = carriedOver(fast, plan.listedAgain);
    if (trailers.kind === 'before' && tree === tipTree) return { commit: tip, overSizeCap, listedAgain };
    const who = { ...SHADOW_IDENTITY, time: Math.floor(Date.now() / 1000) };
    const base = trailers.before ?? tip;
    const message = snapshotMessage({ ...trailers, overSizeCap });
    // The commit, the mark and the look for a reflog at once; the ref moves after all of them.
    const [commit, , logged] = await Promise.all([
      traced('commit', () =>
        this.#objects.write('commit', buildCommit({ tree, parents: [base], author: who, committer: who, message })),
      ),
      tree === tipTree ? null : traced('mark', () => writeNew(join(this.#dir, INDEX_BEHIND), `${tip}\n`)),
      stat(join(this.#gitDir, 'logs', SNAPSHOTS_REF)).then(
        () => true,
        () => false,
      ),
    ]);
    await traced('ref', () =>
      this.#refs.update(SNAPSHOTS_REF, commit, {
        old: tip,
        reflog: logged ? { who: SHADOW_IDENTITY, message: '' } : null,
      }),
    );
    return { commit, overSizeCap, listedAgain };
  }
}

/** The last snapshot's files over the cap, those under the paths looked at replaced by what was found there. */
export function carriedOver(fast: FastPath, found: readonly string[]): string[] {
  const out = new Set(found);
  for (const p of fast.last.overSizeCap) if (!fast.paths.some((q) => p === q || p.startsWith(`${q}/`))) out.add(p);
  return [...out].sort();
}
