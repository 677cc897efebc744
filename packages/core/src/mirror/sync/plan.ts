import { deriveSteps, type Derivation } from '../../model/derive.js';
import { extendDerivation, type Extension } from '../../model/extend.js';
import type { Known } from '../repo/state.js';
import type { BranchBuild } from '../branch-build.js';
import type { HostYield } from '../host-yield.js';
import type { Ingested } from './ingest.js';

/** A sync this long or longer writes its objects as one pack: a backfill, or a repair. */
const PACKED_BACKFILL_TURNS = 32;
const PACKED_BACKFILL_BYTES = 256 << 20;

/**
 * Where a derivation from scratch writes its objects: `pack`, one pack whole before any ref
 * moves (a long backfill); `turn`, where a live turn's go (a short backfill); `loose`, a file
 * each (a repair, so a damaged loose file is rewritten, not left beside a pack).
 */
export type SinkKind = 'pack' | 'turn' | 'loose';

/** The turns and branches a sync writes, decided from what was ingested alone. */
export type TurnWork =
  /** Nothing new since the last sync's plan: its derivation and builds stand as they are. */
  | { kind: 'same'; derivation: Derivation<Known>; builds: Map<string, BranchBuild> }
  /** The new nodes only continue one branch: the last sync's builds carried on along `extension`. */
  | { kind: 'extend'; extension: Extension<Known>; derivation: Derivation<Known>; builds: Map<string, BranchBuild> }
  /**
   * The whole DAG derived. `seed`: first look in the repository for commits to keep (no state
   * was loaded).
   */
  | { kind: 'derive'; derivation: Derivation<Known>; seed: boolean; sink: SinkKind };

/** The second phase's value: what was ingested, and the work decided on. */
export interface Planned extends Ingested {
  work: TurnWork;
}

/**
 * Decide the sync's work (pure: nothing is read or written). A derivation from scratch runs in
 * steps, giving the host a turn through `host` when one is due.
 */
export async function plan(ingested: Ingested, host: HostYield): Promise<Planned> {
  const { previous, added, state, session, loaded, full, fresh } = ingested;
  const known = state.known;
  const extension =
    previous !== undefined && added !== null
      ? added.length === 0 && session.head === previous.sessionHead
        ? 'same'
        : extendDerivation(previous.derivation, {
            added,
            byId: known,
            head: session.head,
            headBefore: previous.sessionHead,
          })
      : null;
  if (previous !== undefined && extension === 'same')
    return { ...ingested, work: { kind: 'same', derivation: previous.derivation, builds: previous.builds } };
  if (previous !== undefined && extension !== null && extension !== 'same')
    return {
      ...ingested,
      work: { kind: 'extend', extension, derivation: extension.derivation, builds: previous.builds },
    };
  const derivation = await host.run(deriveSteps([...known.values()], session.head));
  // A backfill writes one pack, not a file per object; the pack is whole before any ref moves.
  const turns = derivation.branches.reduce((sum, b) => sum + b.complete, 0);
  let freshBytes = 0;
  for (const raw of fresh.values()) freshBytes += raw.length;
  // The pack is built in memory: a history of huge outputs goes loose instead.
  const onePack = loaded === null && turns >= PACKED_BACKFILL_TURNS && freshBytes < PACKED_BACKFILL_BYTES;
  // A short backfill goes where a turn goes (a small pack on Node): two files, not a file
  // and a fan-out directory per object (a directory is a block on disk, more than a small object).
  // A repair (full) writes loose, so a damaged loose file is rewritten, not left beside a pack.
  const sink: SinkKind = onePack ? 'pack' : loaded === null && !full ? 'turn' : 'loose';
  return { ...ingested, work: { kind: 'derive', derivation, seed: loaded === null, sink } };
}
