// The server's search index (`@entity-git/search`, a file beside its session repositories): brought
// up to date with every repository at start-up, then after each sync that wrote something (the
// updates queued: the syncs of 50 ms share one transaction, and a search sees them after it). An
// index that fails is logged and mended by the next update; it never fails a write or a sync.
import type { DagSource, MirrorService, SyncResult } from '@entity-git/core';
import { SearchIndex } from '@entity-git/search';

export interface ServerSearch {
  index: SearchIndex;
  /** After a sync that wrote something: the index update from its result, queued (a batch of syncs, one transaction). */
  onSynced(result: SyncResult): void;
  /** Every session of the DAG brought up to date (what a sync wrote while the server was down). */
  catchUp(dag: DagSource): Promise<void>;
  /** Follow the mirror service's syncs too (project turns, `send_message`'s own). */
  follow(service: Pick<MirrorService, 'on'>): void;
  close(): Promise<void>;
}

export function openServerSearch(root: string, log: (line: string) => void): ServerSearch {
  const index = new SearchIndex({ root });
  const failed = (sessionId: string, err: unknown) =>
    log(`search index update of ${sessionId} failed: ${(err as Error).message}`);
  return {
    index,
    onSynced: (result) => index.enqueue(result, failed),
    async catchUp(dag) {
      for (const sessionId of await dag.listSessions())
        await index.update(sessionId).catch((err: unknown) => failed(sessionId, err));
    },
    follow: (service) => void index.attach(service, failed),
    async close() {
      await index.settle();
      index.close();
    },
  };
}
