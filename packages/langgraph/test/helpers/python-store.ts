// Checkpoints as Python LangGraph writes them: the SqliteSaver's and PostgresSaver's tables (the
// facts' DDL), the values encoded by python-encode.ts.
import Database from 'better-sqlite3';
import pg from 'pg';
import { type CheckpointSpec, metadataOf, pythonCheckpoint, typed } from './python-encode.js';

export * from './python-encode.js';

/**
 * Python's channel versions, unique per value as `PostgresSaver.get_next_version` mints them
 * (`f"{n:032}.{random():016}"`): here the fraction counts distinct values, so a branch's value
 * never takes its sibling's blob.
 */
/** One minting per database, so that appended checkpoints name the blobs written before. */
const minters = new Map<string, Versions>();
function versions(url: string): Versions {
  let v = minters.get(url);
  if (v === undefined) minters.set(url, (v = new Versions()));
  return v;
}

class Versions {
  readonly #seen = new Map<string, string>();
  of(thread: string, channel: string, n: number, blob: Uint8Array): string {
    const key = `${thread}\u0000${channel}\u0000${n}\u0000${Buffer.from(blob).toString('base64')}`;
    let v = this.#seen.get(key);
    if (v === undefined) {
      v = `${String(n).padStart(32, '0')}.${String(this.#seen.size + 1).padStart(16, '0')}`;
      this.#seen.set(key, v);
    }
    return v;
  }
}

/** `langgraph-checkpoint-sqlite`'s tables (the facts' DDL), the checkpoints written as `SqliteSaver.put` does. */
export function writePythonSqlite(file: string, checkpoints: readonly CheckpointSpec[]): void {
  const db = new Database(file);
  try {
    db.exec(`CREATE TABLE IF NOT EXISTS checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
      checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB,
      PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
    CREATE TABLE IF NOT EXISTS writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
      checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT,
      value BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));`);
    const insert = db.prepare(
      'INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    for (const c of checkpoints) {
      const versions = Object.fromEntries(
        Object.entries(c.versions).map(([ch, n]) => [ch, `${String(n).padStart(32, '0')}.${'0'.repeat(16)}`]),
      );
      const [type, blob] = typed(c, pythonCheckpoint(c, versions, c.values));
      const metadata = Buffer.from(JSON.stringify(metadataOf(c)));
      insert.run(c.thread, '', c.id, c.parent, type, blob, metadata);
    }
  } finally {
    db.close();
  }
}

/** Python's `PostgresSaver` keeps these channel values inline in the checkpoint's JSONB. */
const isPrimitive = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);

/** `langgraph-checkpoint-postgres`'s tables, the checkpoints written as `PostgresSaver.put` does. */
export async function writePythonPostgres(
  url: string,
  checkpoints: readonly CheckpointSpec[],
  options: { append?: boolean } = {},
): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    if (!options.append)
      await client.query(`CREATE TABLE checkpoint_migrations (v INTEGER PRIMARY KEY);
      INSERT INTO checkpoint_migrations (v) VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9);
      CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL,
        parent_checkpoint_id TEXT, type TEXT, checkpoint JSONB NOT NULL, metadata JSONB NOT NULL DEFAULT '{}',
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
      CREATE TABLE checkpoint_blobs (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', channel TEXT NOT NULL,
        version TEXT NOT NULL, type TEXT NOT NULL, blob BYTEA, PRIMARY KEY (thread_id, checkpoint_ns, channel, version));
      CREATE TABLE checkpoint_writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', checkpoint_id TEXT NOT NULL,
        task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT, blob BYTEA NOT NULL, task_path TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));`);
    const minted = versions(url);
    for (const c of checkpoints) {
      const inline: Record<string, unknown> = {};
      const versions: Record<string, string> = {};
      for (const [channel, n] of Object.entries(c.versions)) {
        const has = Object.hasOwn(c.values, channel);
        const value = c.values[channel];
        if (has && isPrimitive(value)) {
          inline[channel] = value;
          versions[channel] = `${String(n).padStart(32, '0')}.${'0'.repeat(16)}`;
          continue;
        }
        const [type, blob] = has ? typed(c, value) : ['empty', null];
        const version = minted.of(c.thread, channel, n, blob ?? new Uint8Array(0));
        versions[channel] = version;
        await client.query(
          'INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING',
          [c.thread, '', channel, version, type, blob === null ? null : Buffer.from(blob)],
        );
      }
      await client.query(
        'INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) VALUES ($1, $2, $3, $4, $5, $6)',
        [c.thread, '', c.id, c.parent, pythonCheckpoint(c, versions, inline), metadataOf(c)],
      );
    }
  } finally {
    await client.end();
  }
}
