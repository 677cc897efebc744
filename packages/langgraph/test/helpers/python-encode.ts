// Values as Python LangGraph serialises them, built from the format's facts (docs/design.md,
// "LangGraph stores from the command line"): msgpack with LangGraph's extension types, LangChain
// messages as pydantic v2 models (code 5), the JSON fallback. No Node API: the browser tests use it.
import { encode, ExtensionCodec } from '@msgpack/msgpack';

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
export function typed(c: CheckpointSpec, value: unknown): [string, Uint8Array] {
  return c.serialisation === 'json'
    ? ['json', new TextEncoder().encode(JSON.stringify(value))]
    : ['msgpack', packPython(value)];
}

/** `datetime.isoformat()` of a UTC time: `2026-01-01T00:04:01.000000+00:00`. */
export function pythonTs(iso: string): string {
  const d = new Date(iso);
  return `${d.toISOString().slice(0, 19)}.${String(d.getUTCMilliseconds() * 1000).padStart(6, '0')}+00:00`;
}

/** The checkpoint dict Python stores (`v` 4). */
export function pythonCheckpoint(c: CheckpointSpec, versions: Record<string, string>, values: Record<string, unknown>) {
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

export const metadataOf = (c: CheckpointSpec) => c.metadata ?? { source: 'loop', step: 0, parents: {} };
