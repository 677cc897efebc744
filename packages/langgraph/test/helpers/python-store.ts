// Checkpoints as Python LangGraph writes them, built from the format's facts (docs/design.md,
// "LangGraph stores from the command line"): msgpack with LangGraph's extension types, LangChain
// messages as pydantic v2 models (code 5), the SqliteSaver's and PostgresSaver's tables.
import Database from 'better-sqlite3';
import { encode, ExtensionCodec } from '@msgpack/msgpack';
import pg from 'pg';

/** One msgpack extension value of LangGraph's serializer: `code` 0–5 and its payload's parts. */
export class Ext {
  constructor(
    readonly code: number,
    readonly parts: readonly unknown[],
  ) {}
}

const codec = new ExtensionCodec();
for (let code = 0; code <= 5; code++) {
  codec.register({
    type: code,
    encode: (v) => (v instanceof Ext && v.code === code ? encode(v.parts, { extensionCodec: codec }) : null),
    decode: () => null,
  });
}

/** Python's `ormsgpack.packb(value, default=_msgpack_default)`, as far as these values go. */
export const packPython = (value: unknown): Uint8Array => encode(value, { extensionCodec: codec });

/** A LangChain message's fields, as a test writes them (the defaults of each class filled in by {@link pyMessage}). */
export interface MessageSpec {
  type: 'human' | 'ai' | 'tool' | 'system';
  id: string;
  content: unknown;
  name?: string | null;
  tool_calls?: Array<{ id: string; name: string; args: Record<string, unknown> }>;
  usage_metadata?: Record<string, unknown> | null;
  tool_call_id?: string;
  additional_kwargs?: Record<string, unknown>;
  response_metadata?: Record<string, unknown>;
}

const CLASSES = { human: 'HumanMessage', ai: 'AIMessage', tool: 'ToolMessage', system: 'SystemMessage' } as const;

/** The `model_dump()` of a LangChain message, every field Python's class has, defaults included. */
export function pythonDict(m: MessageSpec): Record<string, unknown> {
  const dict: Record<string, unknown> = {
    content: m.content,
    additional_kwargs: m.additional_kwargs ?? {},
    response_metadata: m.response_metadata ?? {},
    type: m.type,
    name: m.name ?? null,
    id: m.id,
  };
  if (m.type === 'human' || m.type === 'ai') dict.example = false;
  if (m.type === 'ai') {
    dict.tool_calls = (m.tool_calls ?? []).map((c) => ({ name: c.name, args: c.args, id: c.id, type: 'tool_call' }));
    dict.invalid_tool_calls = [];
    dict.usage_metadata = m.usage_metadata ?? null;
  }
  if (m.type === 'tool') {
    dict.tool_call_id = m.tool_call_id;
    dict.artifact = null;
    dict.status = 'success';
  }
  return dict;
}

/** The message as Python's msgpack holds it: extension 5, `(module, class, model_dump(), "model_validate_json")`. */
export function pyMessage(m: MessageSpec): Ext {
  return new Ext(5, [`langchain_core.messages.${m.type}`, CLASSES[m.type], pythonDict(m), 'model_validate_json']);
}

/** A checkpoint of one thread, as a test describes it. */
export interface CheckpointSpec {
  thread: string;
  id: string;
  parent: string | null;
  /** An ISO time; written as Python's `isoformat()` (`+00:00`, microseconds). */
  ts: string;
  /** The channel values, messages already as {@link pyMessage} values (or anything else msgpack holds). */
  values: Record<string, unknown>;
  /** Each channel's version number (a plain count); written as Python's `"<32 digits>.<16 digits>"`. */
  versions: Record<string, number>;
  metadata?: Record<string, unknown>;
  /** How Python serialised the values: `msgpack` (default) or its `json` fallback (values then plain JSON, `lc` objects). */
  serialisation?: 'msgpack' | 'json';
}

/** Python's `dumps_typed` of a value: `(type, bytes)`. */
function typed(c: CheckpointSpec, value: unknown): [string, Uint8Array] {
  return c.serialisation === 'json'
    ? ['json', new TextEncoder().encode(JSON.stringify(value))]
    : ['msgpack', packPython(value)];
}

/** `datetime.isoformat()` of a UTC time: `2026-01-01T00:04:01.000000+00:00`. */
export function pythonTs(iso: string): string {
  const d = new Date(iso);
  return `${d.toISOString().slice(0, 19)}.${String(d.getUTCMilliseconds() * 1000).padStart(6, '0')}+00:00`;
}

/**
 * Python's channel versions, unique per value as `PostgresSaver.get_next_version` mints them
 * (`f"{n:032}.{random():016}"`): here the fraction counts distinct values, so a branch's value
 * never takes its sibling's blob.
 */
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

function pythonCheckpoint(c: CheckpointSpec, versions: Record<string, string>, values: Record<string, unknown>) {
  return {
    v: 4,
    ts: pythonTs(c.ts),
    id: c.id,
    channel_values: values,
    channel_versions: versions,
    versions_seen: {},
    updated_channels: null,
  };
}

const metadataOf = (c: CheckpointSpec) => c.metadata ?? { source: 'loop', step: 0, parents: {} };

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
export async function writePythonPostgres(url: string, checkpoints: readonly CheckpointSpec[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
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
    const minted = new Versions();
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
