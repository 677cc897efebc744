import type { MirrorContext } from '../context.js';
import { HostYield, yieldToHost } from '../host-yield.js';
import type { SyncResult } from '../mirror.js';
import { LIVE_STATES, remember } from '../repo/state.js';
import type { CheckedOut } from './checkout.js';
import { syncRecord } from './synced.js';

/**
 * The last phase: record the repository's state (what stays unsettled, the tips, HEAD, the
 * change marker), keep the plan for the next sync, and say what the sync did (its record kept
 * beside the result, for the check after it).
 */
export async function record(ctx: MirrorContext, c: CheckedOut): Promise<SyncResult> {
  const { sessionId, repo, session, config, marker, loaded, state, delta, unsettled } = c;
  const { derivation, builds, commitsWritten, before, tips, branchesMoved, headMoved, metaMoved } = c;
  const { inPacks, packed, worktreeChanged, nodesRead } = c;
  const known = state.known;
  const stillUnsettled = new Set<string>();
  // A backfill's every node is in `delta.nodes`: the host gets its turns.
  const host = new HostYield(ctx.yieldEveryMs);
  for (const ids of [unsettled, delta.nodes]) {
    for (const id of ids) {
      if (host.owed()) await yieldToHost();
      const n = known.get(id);
      if (n && (n.pending || !n.stored)) stillUnsettled.add(id);
    }
  }
  state.unsettled = stillUnsettled;
  state.tips = Object.fromEntries([...tips].map(([name, t]) => [name, t.oid]));
  state.head = derivation.head ?? (await repo.refs.headBranch());
  const settled = marker === null ? null : await markerAgain(ctx, sessionId, marker);
  const changed = delta.nodes.size + delta.deleted.size + delta.memo.length > 0 || (state.marker ?? null) !== settled;
  state.marker = settled;
  const noop =
    repo.objects.written === before.objects &&
    packed === 0 &&
    branchesMoved.length === 0 &&
    !headMoved &&
    !worktreeChanged &&
    !metaMoved;
  if (loaded !== null && !changed && branchesMoved.length === 0 && !headMoved)
    ctx.cache.states.keep(repo.gitdir, state, config);
  else await ctx.cache.states.save(repo.gitdir, { state, delta: loaded === null ? null : delta, config, host });
  if (derivation.unknownHead === undefined)
    remember(ctx.cache.plans, repo.gitdir, { state, sessionHead: session.head, derivation, builds }, LIVE_STATES);
  const result: SyncResult = {
    sessionId,
    commitsWritten,
    branchesMoved,
    head: derivation.head,
    nodesRead,
    noop,
    derivation: c.work.kind !== 'derive' ? 'extended' : 'full',
    objectsWritten: repo.objects.written - before.objects + inPacks.objects,
    bytesWritten: repo.objects.writtenBytes - before.bytes + inPacks.bytes,
  };
  if (derivation.unknownHead !== undefined) result.unknownHead = derivation.unknownHead;
  if (c.extendedBranches.length > 0) result.extendedBranches = c.extendedBranches;
  ctx.synced.set(result, syncRecord(c));
  return result;
}

/**
 * The marker read before the rows, if a read after them gives it again; else null (none recorded:
 * the next check is the full one). A marker computed from the rows returns to an earlier value
 * when the rows do, so a write between the two reads — rows this sync may have mirrored — and its
 * undoing later would otherwise match the recorded marker while the repository holds the write.
 */
async function markerAgain(ctx: MirrorContext, sessionId: string, before: string): Promise<string | null> {
  try {
    return (await ctx.dag.changeMarker?.(sessionId)) === before ? before : null;
  } catch {
    return null;
  }
}
