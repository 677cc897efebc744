import type { MirrorContext } from '../context.js';
import { HostYield } from '../host-yield.js';
import type { SyncOptions, SyncResult } from '../mirror.js';
import { openRepo } from '../repo/repo.js';
import type { SessionId } from '../session-id.js';
import { withRepoLock } from '../repo/files.js';
import { build } from './build.js';
import { checkOutHead } from './checkout.js';
import { ingest } from './ingest.js';
import { plan } from './plan.js';
import { record } from './state.js';
import { write } from './write.js';

/**
 * One sync of a session, serialized per repository by its sync lock: ingest (the repository
 * readied, its state and the DAG read) → plan (the turns and branches to write, pure) → build
 * (blobs, trees, commits into a sink) → write (the objects finished, refs, HEAD, the meta ref)
 * → check out (working tree and index) → record (the repository's state). Each phase hands the
 * next one value.
 */
export async function syncSession(ctx: MirrorContext, sessionId: SessionId, options: SyncOptions): Promise<SyncResult> {
  const repo = openRepo(ctx, sessionId);
  // The key is a path: adapters with files lock that file, others use it as a lock name.
  return withRepoLock(ctx.store, repo.gitdir, 'sync.lock', async () => {
    // Work a sync started beside its own (a backfill's working-tree files) ends before the lock
    // is let go, also when the sync fails.
    const beside: Promise<unknown>[] = [];
    try {
      // Each phase's steps may be short, but not all of them together: the host gets a turn
      // between two phases when one is due.
      const host = new HostYield(ctx.yieldEveryMs);
      const ingested = await ingest(ctx, { repo, full: options.full === true, reread: options.reread });
      await host.due();
      const planned = await plan(ingested, host);
      await host.due();
      const built = await build(ctx, planned, beside);
      await host.due();
      const written = await write(ctx, built);
      await host.due();
      const checkedOut = await checkOutHead(ctx, written);
      await host.due();
      return await record(ctx, checkedOut);
    } finally {
      await Promise.allSettled(beside);
    }
  });
}
