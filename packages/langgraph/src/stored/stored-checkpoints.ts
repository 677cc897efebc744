import { EntityGitError } from '@entity-git/core';
import type { Kysely } from 'kysely';
import type { CheckpointConfig, CheckpointLister, CheckpointTupleLike } from '../checkpoint-lister.js';
import type { TypedDecoder } from '../python/typed-decoder.js';

/**
 * How the checkpoints are laid out:
 * - `sqlite` (`SqliteSaver`, Python's and LangGraph.js's): `checkpoints(thread_id, checkpoint_ns,
 *   checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)`, the channel values inside
 *   the `(type, checkpoint)` value;
 * - `postgres` (`PostgresSaver`, both): `checkpoints.checkpoint` JSONB (primitive channel values
 *   inline) and each other channel's value per version in `checkpoint_blobs(thread_id,
 *   checkpoint_ns, channel, version, type, blob)`.
 */
export type CheckpointLayout = 'sqlite' | 'postgres';

export interface StoredCheckpointsOptions {
  /** A Kysely over the database (read-only is enough: only SELECTs are run). */
  db: Kysely<any>;
  layout: CheckpointLayout;
  /** Reads the stored values (one per store, so that each unknown type is reported once). */
  decoder: TypedDecoder;
}

/** Rows read per query while listing (newest first: a sync stops at the first checkpoint it knows). */
const PAGE = 32;

/**
 * A saver's tables read directly, as a {@link CheckpointLister}: what `list` of LangGraph's own
 * savers returns, for checkpoints written by Python or by LangGraph.js, without either installed.
 * Only SELECTs: it never writes.
 */
export class StoredCheckpoints implements CheckpointLister {
  readonly #db: Kysely<any>;
  readonly #layout: CheckpointLayout;
  readonly #decoder: TypedDecoder;

  constructor(options: StoredCheckpointsOptions) {
    this.#db = options.db;
    this.#layout = options.layout;
    this.#decoder = options.decoder;
  }

  async *list(config: CheckpointConfig, options?: { limit?: number }): AsyncIterable<CheckpointTupleLike> {
    const c = config.configurable ?? {};
    let left = options?.limit ?? Number.POSITIVE_INFINITY;
    // Keyset paging on the id holds within one thread (ids are unique per thread only).
    const page = c.thread_id === undefined ? left : PAGE;
    let before: string | null = null;
    while (left > 0) {
      let q = this.#db
        .selectFrom('checkpoints')
        .select(['thread_id', 'checkpoint_ns', 'checkpoint_id', 'checkpoint', 'metadata'])
        .orderBy('checkpoint_id', 'desc')
        .orderBy('thread_id');
      if (Number.isFinite(Math.min(page, left))) q = q.limit(Math.min(page, left));
      if (this.#layout === 'sqlite') q = q.select('type');
      if (c.thread_id !== undefined) q = q.where('thread_id', '=', String(c.thread_id));
      if (c.checkpoint_ns !== undefined) q = q.where('checkpoint_ns', '=', String(c.checkpoint_ns));
      if (before !== null) q = q.where('checkpoint_id', '<', before);
      const rows = (await q.execute()) as CheckpointRow[];
      for (const row of rows) yield await this.#tuple(row);
      if (!(rows.length >= Math.min(page, left))) return;
      left -= rows.length;
      before = rows.at(-1)!.checkpoint_id;
    }
  }

  /** The threads with a checkpoint of namespace `''`, in the order they began (their lowest checkpoint id). */
  async threadIds(): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('checkpoints')
      .select((eb) => ['thread_id', eb.fn.min('checkpoint_id').as('first')])
      .where('checkpoint_ns', '=', '')
      .groupBy('thread_id')
      .orderBy('first')
      .orderBy('thread_id')
      .execute();
    return rows.map((r) => String(r.thread_id));
  }

  /** Each thread's newest checkpoint id (namespace `''`): what changes whenever LangGraph writes to it. */
  async newestIds(): Promise<Map<string, string>> {
    const rows = await this.#db
      .selectFrom('checkpoints')
      .select((eb) => ['thread_id', eb.fn.max('checkpoint_id').as('newest')])
      .where('checkpoint_ns', '=', '')
      .groupBy('thread_id')
      .execute();
    return new Map(rows.map((r) => [String(r.thread_id), String(r.newest)]));
  }

  async #tuple(row: CheckpointRow): Promise<CheckpointTupleLike> {
    if (this.#layout === 'sqlite') return checkpointRowTuple(row, this.#decoder);
    const place = placeOf(row);
    const stored = typeof row.checkpoint === 'string' ? JSON.parse(row.checkpoint) : row.checkpoint;
    const checkpoint = asRecord(stored, place);
    return tupleOf(row, checkpoint, await this.#blobs(row, checkpoint), this.#decoder);
  }

  /**
   * A PostgreSQL checkpoint's channel values: those kept inline in its JSONB, and each other
   * channel's blob at the version the checkpoint names. A blob is decoded when its value is read,
   * so the channels the mirror does not look at cost only their row.
   */
  async #blobs(row: CheckpointRow, checkpoint: Record<string, unknown>): Promise<Record<string, unknown>> {
    const place = placeOf(row);
    const values: Record<string, unknown> = { ...asRecord(checkpoint.channel_values ?? {}, place) };
    const versions = Object.entries(asRecord(checkpoint.channel_versions ?? {}, place)).filter(
      ([channel]) => !Object.hasOwn(values, channel),
    );
    if (versions.length === 0) return values;
    const blobs = await this.#db
      .selectFrom('checkpoint_blobs')
      .select(['channel', 'type', 'blob'])
      .where('thread_id', '=', row.thread_id)
      .where('checkpoint_ns', '=', row.checkpoint_ns)
      .where((eb) =>
        eb.or(versions.map(([channel, v]) => eb.and([eb('channel', '=', channel), eb('version', '=', String(v))]))),
      )
      .execute();
    for (const b of blobs as Array<{ channel: string; type: string; blob: Uint8Array | null }>) {
      if (b.type === 'empty') continue;
      let value: unknown;
      let read = false;
      Object.defineProperty(values, b.channel, {
        enumerable: true,
        get: () => {
          if (!read) value = decoded(this.#decoder, b.type, b.blob, place);
          read = true;
          return value;
        },
      });
    }
    return values;
  }
}

function asRecord(v: unknown, place: { threadId: string; checkpointId: string }): Record<string, unknown> {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  throw new EntityGitError(
    'INVALID_NODE',
    `[langgraph] checkpoint ${JSON.stringify(place.checkpointId)} of thread ${JSON.stringify(place.threadId)} is not a checkpoint object`,
    { ...place },
  );
}

function safe<T>(run: () => T): T | null {
  try {
    return run();
  } catch {
    return null;
  }
}

/** One row of the checkpoints table: the SQLite layout's columns (`type` and the `checkpoint` value). */
export interface CheckpointRow {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  type?: string | null;
  /** The serialised checkpoint (SQLite), or its JSON object (PostgreSQL's JSONB). */
  checkpoint: unknown;
  metadata: unknown;
}

/**
 * A row of `SqliteSaver`'s checkpoints table (Python's or LangGraph.js's), wherever it was copied
 * to — an IndexedDB store, a JSON export — as LangGraph's `list` yields it: the `(type,
 * checkpoint)` value decoded. For a {@link CheckpointLister} of one's own over such rows.
 */
export function checkpointRowTuple(row: CheckpointRow, decoder: TypedDecoder): CheckpointTupleLike {
  const place = placeOf(row);
  const checkpoint = asRecord(decoded(decoder, row.type ?? 'msgpack', row.checkpoint, place), place);
  return tupleOf(row, checkpoint, { ...asRecord(checkpoint.channel_values ?? {}, place) }, decoder);
}

function tupleOf(
  row: CheckpointRow,
  checkpoint: Record<string, unknown>,
  values: Record<string, unknown>,
  decoder: TypedDecoder,
): CheckpointTupleLike {
  const place = placeOf(row);
  return {
    config: {
      configurable: { thread_id: place.threadId, checkpoint_ns: row.checkpoint_ns, checkpoint_id: place.checkpointId },
    },
    checkpoint: { id: place.checkpointId, ts: String(checkpoint.ts ?? ''), channel_values: values },
    metadata: metadataOf(decoder, row.metadata),
  };
}

function placeOf(row: CheckpointRow): { threadId: string; checkpointId: string } {
  return { threadId: String(row.thread_id), checkpointId: String(row.checkpoint_id) };
}

/** The metadata as stored: JSON (Python's SQLite saver, PostgreSQL's JSONB, LangGraph.js's serde) or msgpack. */
function metadataOf(decoder: TypedDecoder, stored: unknown): unknown {
  if (stored === null || stored === undefined || typeof stored !== 'object' || !ArrayBuffer.isView(stored))
    return typeof stored === 'string' ? safe(() => JSON.parse(stored)) : stored;
  const bytes = stored as Uint8Array;
  return safe(() => decoder.decode('json', bytes)) ?? safe(() => decoder.decode('msgpack', bytes));
}

function decoded(
  decoder: TypedDecoder,
  type: string,
  data: unknown,
  place: { threadId: string; checkpointId: string },
): unknown {
  try {
    return decoder.decode(type, data as Uint8Array | string | null);
  } catch (cause) {
    throw new EntityGitError(
      'INVALID_NODE',
      `[langgraph] checkpoint ${JSON.stringify(place.checkpointId)} of thread ${JSON.stringify(place.threadId)}: ${(cause as Error).message}`,
      { ...place },
      { cause },
    );
  }
}
