import { EntityGitError, type JsonValue, type Role } from '@entity-git/core';
import { keyOf, toJson } from './to-json.js';

/** One tool call of an assistant message: what a tool result names and what its node is called. */
export interface ToolCallRef {
  id: string;
  name: string | null;
}

/** One item of a messages channel, read into what a DAG node needs. */
export interface MessageRecord {
  /** The message's `id`; null when it has none (or an empty one). */
  id: string | null;
  role: Role;
  /**
   * What makes this message this message: its role, type, name, content, tool calls and the tool
   * call it answers, as key-sorted JSON. A message met again with the same id and key is the
   * same node; with the same id and another key it was replaced (an edit).
   */
  key: string;
  content: JsonValue;
  /** The node's metadata but for what depends on its place (`tool`, `pending`). */
  metadata: Record<string, JsonValue>;
  /** An assistant message's tool calls, in order. */
  toolCalls: ToolCallRef[];
  /** A tool message's `tool_call_id`, or null. */
  toolCallId: string | null;
  /** The message's `name`, or null. */
  name: string | null;
}

/** Where an item sits, for the error a bad one gets. */
export interface ItemPlace {
  threadId: string;
  checkpointId: string;
  index: number;
}

/** LangChain's message types (`BaseMessage.type`) and the role of each. */
const TYPE_ROLES: Readonly<Record<string, Role>> = {
  human: 'user',
  user: 'user',
  ai: 'assistant',
  assistant: 'assistant',
  tool: 'tool',
  function: 'tool',
  system: 'system',
  developer: 'system',
};

/** Class names of LangChain's serialized form (`{ lc: 1, type: 'constructor', id: […, name] }`). */
const CLASS_TYPES: Readonly<Record<string, string>> = {
  HumanMessage: 'human',
  AIMessage: 'ai',
  ToolMessage: 'tool',
  SystemMessage: 'system',
  ChatMessage: 'generic',
  FunctionMessage: 'function',
  RemoveMessage: 'remove',
};

/**
 * Reads one item of a messages channel: a LangChain message (a `BaseMessage` as the savers revive
 * it), its serialized form (a saver whose serializer did not revive it), or a plain object with
 * `type` or `role` (OpenAI style). Returns null for a `RemoveMessage`, which marks a deletion and
 * is no message. Anything else, or a message whose role is not known, is `INVALID_NODE`.
 */
export function readMessage(item: unknown, place: ItemPlace): MessageRecord | null {
  const found = typeAndFields(item);
  if (found === null) invalid(place, 'is not a message');
  const { type, fields } = found;
  if (type === 'remove') return null;
  const role = roleOf(type, fields);
  if (role === null) invalid(place, `is a message of unknown type ${JSON.stringify(type)}`);
  try {
    return record(type, role, fields);
  } catch (cause) {
    if (cause instanceof EntityGitError) throw cause;
    return invalid(place, 'holds a value JSON cannot hold (a cycle)', cause);
  }
}

function typeAndFields(item: unknown): { type: string; fields: Record<string, unknown> } | null {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return null;
  const m = item as Record<string, unknown>;
  if (m.lc === 1 && m.type === 'constructor' && Array.isArray(m.id)) {
    const cls = String(m.id.at(-1) ?? '').replace(/Chunk$/, '');
    const fields = m.kwargs !== null && typeof m.kwargs === 'object' ? (m.kwargs as Record<string, unknown>) : {};
    return { type: CLASS_TYPES[cls] ?? cls, fields };
  }
  if (typeof m.type === 'string') return { type: m.type, fields: m };
  // Core versions before `type` was a field answer `_getType()`.
  const getType = m._getType;
  if (typeof getType === 'function') {
    const type: unknown = getType.call(m);
    if (typeof type === 'string') return { type, fields: m };
  }
  if (typeof m.role === 'string') return { type: 'generic', fields: m };
  return null;
}

function roleOf(type: string, fields: Record<string, unknown>): Role | null {
  if (type === 'generic') return typeof fields.role === 'string' ? (TYPE_ROLES[fields.role] ?? null) : null;
  return TYPE_ROLES[type] ?? null;
}

function record(type: string, role: Role, f: Record<string, unknown>): MessageRecord {
  const id = typeof f.id === 'string' && f.id !== '' ? f.id : null;
  const name = typeof f.name === 'string' && f.name !== '' ? f.name : null;
  const content = toJson(f.content);
  const toolCalls = role === 'assistant' ? toolCallsOf(f) : [];
  const toolCallId = role === 'tool' && typeof f.tool_call_id === 'string' ? f.tool_call_id : null;
  const metadata: Record<string, JsonValue> = { type };
  if (type === 'generic' && typeof f.role === 'string') metadata.role = f.role;
  if (name !== null) metadata.name = name;
  const calls = role === 'assistant' ? toJson(f.tool_calls) : null;
  if (Array.isArray(calls) && calls.length > 0) metadata.tool_calls = calls.map(withoutDefaultType);
  if (toolCallId !== null) metadata.tool_call_id = toolCallId;
  // `python_types`: the Python types in the message that could not be read (kept as their data).
  for (const key of [
    'invalid_tool_calls',
    'additional_kwargs',
    'response_metadata',
    'artifact',
    'status',
    'python_types',
  ]) {
    const v = toJson(f[key]);
    if (v === null || v === '' || (typeof v === 'object' && Object.keys(v).length === 0)) continue;
    // A tool message's default status, which Python always stores and LangGraph.js leaves out.
    if (key === 'status' && v === 'success') continue;
    metadata[key] = v;
  }
  const usage = toJson(f.usage_metadata);
  if (usage !== null && typeof usage === 'object' && !Array.isArray(usage)) {
    metadata.usage = usage;
    if (typeof usage.total_tokens === 'number') metadata.tokens = usage.total_tokens;
  }
  const key = keyOf([
    role,
    type,
    metadata.role ?? null,
    name,
    content,
    toolCalls.map((c) => [c.id, c.name]),
    role === 'assistant' ? argsOf(f.tool_calls) : null,
    toolCallId,
  ]);
  return { id, role, key, content, metadata, toolCalls, toolCallId, name };
}

/**
 * A tool call without `type: 'tool_call'`, the only type a call has, which Python always stores
 * and LangGraph.js mostly leaves out: the same conversation gives the same node either way.
 */
function withoutDefaultType(call: JsonValue): JsonValue {
  if (call === null || typeof call !== 'object' || Array.isArray(call) || call.type !== 'tool_call') return call;
  const { type: _type, ...rest } = call;
  return rest;
}

/** `tool_calls` as LangChain holds them (`{ id, name, args }`) or as OpenAI does (`function.name`). */
function toolCallsOf(f: Record<string, unknown>): ToolCallRef[] {
  if (!Array.isArray(f.tool_calls)) return [];
  const out: ToolCallRef[] = [];
  for (const c of f.tool_calls as unknown[]) {
    if (c === null || typeof c !== 'object') continue;
    const call = c as { id?: unknown; name?: unknown; function?: { name?: unknown } };
    if (typeof call.id !== 'string' || call.id === '') continue;
    const name = typeof call.name === 'string' ? call.name : call.function?.name;
    out.push({ id: call.id, name: typeof name === 'string' && name !== '' ? name : null });
  }
  return out;
}

function argsOf(calls: unknown): unknown {
  if (!Array.isArray(calls)) return null;
  return calls.map((c) =>
    c !== null && typeof c === 'object'
      ? ((c as { args?: unknown; function?: { arguments?: unknown } }).args ??
        (c as { function?: { arguments?: unknown } }).function?.arguments ??
        null)
      : null,
  );
}

function invalid(place: ItemPlace, what: string, cause?: unknown): never {
  throw new EntityGitError(
    'INVALID_NODE',
    `[langgraph] item ${place.index} of the messages of checkpoint ${JSON.stringify(place.checkpointId)} (thread ${JSON.stringify(place.threadId)}) ${what}`,
    { ...place },
    { cause },
  );
}
