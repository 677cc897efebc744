import type { DagChanges } from '@entity-git/sqlite';
import { sql } from 'kysely';
import type { FrameworkStore } from './framework-store.js';

/**
 * The sessions of a framework's store that changed since the last poll, for `watch`: every
 * session at the first poll, then those whose fingerprint (LangGraph: the thread's newest
 * checkpoint id; Mastra: its messages' count and newest time, its `updatedAt`) moved. On SQLite,
 * `PRAGMA data_version` first tells whether anything was committed since the last look.
 */
export function watchFrameworkChanges(store: FrameworkStore): DagChanges {
  let known: Map<string, string> | null = null;
  let version: number | null = null;
  return {
    method: store.engine === 'sqlite' ? 'data_version' : 'polling',
    async poll(): Promise<string[]> {
      if (store.engine === 'sqlite') {
        const { rows } = await sql<{ data_version: number }>`pragma data_version`.execute(store.db);
        const now = Number(rows[0]?.data_version);
        if (known !== null && now === version) return [];
        version = now;
      }
      const seen = await store.fingerprints();
      const changed = [...seen].filter(([id, print]) => known?.get(id) !== print).map(([id]) => id);
      known = seen;
      return changed;
    },
    wait: (ms: number) => new Promise((resolve) => setTimeout(resolve, ms)),
    close: () => Promise.resolve(),
  };
}
