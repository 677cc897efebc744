import { EntityGitError } from '@entity-git/core';
import { sql } from 'kysely';
import { dbError } from './engine.js';
import { mappedFingerprints } from './mapping/mapped-changes.js';
import { col } from './rows.js';
import type { SqlStore } from './sql-store.js';

/**
 * Sessions whose nodes or row changed since the last call, for a long-running mirror
 * (`entity-git watch`) of a database that any program writes.
 *
 * - SQLite: `PRAGMA data_version` (one integer read, no table scan) tells whether another
 *   connection committed since the last look; only then are the sessions compared.
 * - PostgreSQL: with a channel, a `LISTEN` connection; a writer's `NOTIFY <channel>, '<session id>'`
 *   names the session (an empty payload: compare them all). Without a channel, the sessions are
 *   compared at every poll.
 *
 * Comparing is one grouped read of the nodes index (count and highest seq per session) and of the
 * sessions' heads. A node filled in place (a placeholder's content) changes neither, so a session
 * that changed in the last `activeWindowMs` is reported again at every change of the database:
 * placeholders are filled while their session is active.
 */
export interface DagChanges {
  /** Every session at the first call; afterwards the ones that changed (possibly none). */
  poll(): Promise<string[]>;
  /** Resolves at the next notification (PostgreSQL with a channel) or after `ms`, whichever is first. */
  wait(ms: number): Promise<void>;
  close(): Promise<void>;
  /** How changes are noticed, for messages: `data_version`, `listen <channel>` or `polling`. */
  readonly method: string;
}

export interface DagChangesOptions {
  /** PostgreSQL: the channel to `LISTEN` on (needs `connectionString`). */
  channel?: string;
  connectionString?: string;
  /** How long a changed session stays re-checked at every change (default 60 s). */
  activeWindowMs?: number;
}

export async function watchDagChanges(store: SqlStore, options: DagChangesOptions = {}): Promise<DagChanges> {
  const { db, names, engine } = store;
  const N = names.nodes;
  const S = names.sessions;
  const activeWindowMs = options.activeWindowMs ?? 60_000;
  let known: Map<string, string> | null = null;
  const activeUntil = new Map<string, number>();
  let lastVersion: number | null = null;

  const fingerprints = async (): Promise<Map<string, string>> => {
    try {
      if (store.mapping !== null) return await mappedFingerprints(db, store.mapping);
      const out = new Map<string, string>();
      const sessions = await db
        .selectFrom(S.table)
        .select([col(S.id).as('id'), (S.head === null ? sql`null` : col(S.head)).as('head')])
        .execute();
      for (const r of sessions) out.set(String(r.id), `h:${r.head ?? ''}`);
      const nodes = await db
        .selectFrom(N.table)
        .select([
          col(N.session_id).as('sid'),
          sql<number>`count(*)`.as('n'),
          sql<number>`max(${col(N.seq)})`.as('last'),
        ])
        .groupBy(col(N.session_id))
        .execute();
      for (const r of nodes) {
        const id = String(r.sid);
        out.set(id, `${out.get(id) ?? ''}|${r.n}:${r.last}`);
      }
      return out;
    } catch (err) {
      throw dbError(err, 'comparing the sessions');
    }
  };

  const dataVersion = async (): Promise<number> => {
    const r = await sql<{ data_version: number }>`pragma data_version`.execute(db);
    return Number(r.rows[0]!.data_version);
  };

  // PostgreSQL LISTEN: its own client, outside kysely's pool (a LISTEN lasts as long as its session).
  let listener: { end(): Promise<void> } | null = null;
  let dirty = true;
  const named = new Set<string>();
  let wake: (() => void) | null = null;
  if (engine === 'postgres' && options.channel !== undefined) {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(options.channel))
      throw new EntityGitError(
        'INVALID_OPTION',
        `[sql] channel must be a plain identifier: ${JSON.stringify(options.channel)}`,
      );
    if (options.connectionString === undefined)
      throw new EntityGitError('INVALID_OPTION', '[sql] LISTEN needs the connectionString');
    const mod = (await import('pg')) as unknown as { default?: { Client: PgClientClass }; Client?: PgClientClass };
    const Client = (mod.default ?? mod).Client!;
    const client = new Client({ connectionString: options.connectionString });
    client.on('error', () => undefined);
    try {
      await client.connect();
      client.on('notification', (m: { payload?: string }) => {
        if (m.payload) named.add(m.payload);
        else dirty = true;
        wake?.();
      });
      await client.query(`listen "${options.channel}"`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw dbError(err, `listening on ${options.channel}`);
    }
    listener = client;
  }
  const method = engine === 'sqlite' ? 'data_version' : listener ? `listen ${options.channel}` : 'polling';

  return {
    method,
    async poll(): Promise<string[]> {
      const now = Date.now();
      if (engine === 'sqlite') {
        const v = await dataVersion().catch((err: unknown) => {
          throw dbError(err, 'reading data_version');
        });
        if (known !== null && v === lastVersion) return [];
        lastVersion = v;
      } else if (listener && known !== null && !dirty) {
        const ids = [...named];
        named.clear();
        for (const id of ids) activeUntil.set(id, now + activeWindowMs);
        return ids;
      }
      dirty = false;
      named.clear();
      const next = await fingerprints();
      const changed = new Set<string>();
      for (const [id, f] of next) {
        if (known === null || known.get(id) !== f) {
          changed.add(id);
          if (known !== null) activeUntil.set(id, now + activeWindowMs);
        }
      }
      // Something changed somewhere: the recently active sessions may have had a node filled.
      if (known !== null && (engine === 'sqlite' || changed.size > 0)) {
        for (const [id, until] of activeUntil) {
          if (until < now) activeUntil.delete(id);
          else if (next.has(id)) changed.add(id);
        }
      }
      known = next;
      return [...changed];
    },
    wait(ms: number): Promise<void> {
      return new Promise((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          wake = null;
          resolve();
        }
        wake = listener ? done : null;
      });
    },
    async close(): Promise<void> {
      wake?.();
      await listener?.end().catch(() => undefined);
      listener = null;
    },
  };
}

type PgClientClass = new (o: {
  connectionString: string;
}) => {
  connect(): Promise<void>;
  query(q: string): Promise<unknown>;
  on(event: string, fn: (arg: never) => void): void;
  end(): Promise<void>;
};
