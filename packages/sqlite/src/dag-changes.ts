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
  const w: Watch = {
    store,
    activeWindowMs: options.activeWindowMs ?? 60_000,
    known: null,
    activeUntil: new Map(),
    lastVersion: null,
    listener: null,
    dirty: true,
    named: new Set(),
    wake: null,
  };
  if (store.engine === 'postgres' && options.channel !== undefined) w.listener = await listen(w, options);
  const method = store.engine === 'sqlite' ? 'data_version' : w.listener ? `listen ${options.channel}` : 'polling';
  return {
    method,
    poll: () => poll(w),
    wait(ms: number): Promise<void> {
      return new Promise((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          w.wake = null;
          resolve();
        }
        w.wake = w.listener ? done : null;
      });
    },
    async close(): Promise<void> {
      w.wake?.();
      await w.listener?.end().catch(() => undefined);
      w.listener = null;
    },
  };
}

/** What a watch keeps between polls. */
interface Watch {
  readonly store: SqlStore;
  readonly activeWindowMs: number;
  /** Each session's fingerprint at the last comparison; null before the first. */
  known: Map<string, string> | null;
  /** Sessions that changed recently, and until when they are re-checked at every change. */
  readonly activeUntil: Map<string, number>;
  /** SQLite: `data_version` at the last poll. */
  lastVersion: number | null;
  /** PostgreSQL LISTEN: its own client, outside kysely's pool (a LISTEN lasts as long as its session). */
  listener: { end(): Promise<void> } | null;
  /** A notification without a payload came (or none was read yet): compare every session. */
  dirty: boolean;
  /** Sessions named by notifications since the last poll. */
  readonly named: Set<string>;
  /** Ends the current `wait` at a notification. */
  wake: (() => void) | null;
}

async function poll(w: Watch): Promise<string[]> {
  const now = Date.now();
  const { known, activeUntil } = w;
  if (w.store.engine === 'sqlite') {
    const v = await dataVersion(w.store).catch((err: unknown) => {
      throw dbError(err, 'reading data_version');
    });
    if (known !== null && v === w.lastVersion) return [];
    w.lastVersion = v;
  } else if (w.listener && known !== null && !w.dirty) {
    const ids = [...w.named];
    w.named.clear();
    for (const id of ids) activeUntil.set(id, now + w.activeWindowMs);
    return ids;
  }
  w.dirty = false;
  w.named.clear();
  const next = await fingerprints(w.store);
  const changed = new Set<string>();
  for (const [id, f] of next) {
    if (known === null || known.get(id) !== f) {
      changed.add(id);
      if (known !== null) activeUntil.set(id, now + w.activeWindowMs);
    }
  }
  // Something changed somewhere: the recently active sessions may have had a node filled.
  if (known !== null && (w.store.engine === 'sqlite' || changed.size > 0)) {
    for (const [id, until] of activeUntil) {
      if (until < now) activeUntil.delete(id);
      else if (next.has(id)) changed.add(id);
    }
  }
  w.known = next;
  return [...changed];
}

/** Each session's head and its nodes' count and highest seq, as one string per session. */
async function fingerprints(store: SqlStore): Promise<Map<string, string>> {
  const { db, names } = store;
  const N = names.nodes;
  const S = names.sessions;
  try {
    // The query form: the computed markers, one grouped read through the queries.
    if (store.mapping !== null && 'form' in store.mapping)
      return new Map([...(await store.dag.changeMarkers())].map(([id, m]) => [id, m ?? '']));
    if (store.mapping !== null) return await mappedFingerprints(db, store.mapping);
    const out = new Map<string, string>();
    const sessions = await db
      .selectFrom(S.table)
      .select([col(S.id).as('id'), (S.head === null ? sql`null` : col(S.head)).as('head')])
      .execute();
    for (const r of sessions) out.set(String(r.id), `h:${r.head ?? ''}`);
    const nodes = await db
      .selectFrom(N.table)
      .select([col(N.session_id).as('sid'), sql<number>`count(*)`.as('n'), sql<number>`max(${col(N.seq)})`.as('last')])
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
}

async function dataVersion(store: SqlStore): Promise<number> {
  const r = await sql<{ data_version: number }>`pragma data_version`.execute(store.db);
  return Number(r.rows[0]!.data_version);
}

/** A PostgreSQL client listening on `options.channel`, its notifications recorded in `w`. */
async function listen(w: Watch, options: DagChangesOptions): Promise<{ end(): Promise<void> }> {
  const channel = options.channel!;
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(channel))
    throw new EntityGitError(
      'INVALID_OPTION',
      `[sqlite] channel must be a plain identifier: ${JSON.stringify(channel)}`,
    );
  if (options.connectionString === undefined)
    throw new EntityGitError('INVALID_OPTION', '[sqlite] LISTEN needs the connectionString');
  const mod = (await import('pg')) as unknown as { default?: { Client: PgClientClass }; Client?: PgClientClass };
  const Client = (mod.default ?? mod).Client!;
  const client = new Client({ connectionString: options.connectionString });
  client.on('error', () => undefined);
  try {
    await client.connect();
    client.on('notification', (m: { payload?: string }) => {
      if (m.payload) w.named.add(m.payload);
      else w.dirty = true;
      w.wake?.();
    });
    await client.query(`listen "${channel}"`);
  } catch (err) {
    await client.end().catch(() => undefined);
    throw dbError(err, `listening on ${channel}`);
  }
  return client;
}

type PgClientClass = new (o: {
  connectionString: string;
}) => {
  connect(): Promise<void>;
  query(q: string): Promise<unknown>;
  on(event: string, fn: (arg: never) => void): void;
  end(): Promise<void>;
};
