import type { DagNode, JsonValue, Role, Session } from '@entity-git/core';
import { asObject, asString, readJsonl, type RecordsOptions, secondsOf } from './jsonl.js';
import { readMessages } from './messages.js';
import type { ParsedSession, TranscriptOptions } from './parsed-session.js';

/** `agent_id` of the sessions read from Gemini CLI session files. */
export const GEMINI_AGENT = 'gemini-cli';

type Obj = { [key: string]: JsonValue };

/** Tool call statuses after which a call holds nothing open. */
const CALL_DONE = new Set(['success', 'completed', 'error', 'cancelled']);

/**
 * The DAG of a Gemini CLI session (`~/.gemini/tmp/<project>/chats/session-….jsonl`, or the older
 * `.json` holding one object with `messages[]`), its records replayed in order: a metadata line,
 * message records, `{"$set": {…}}` updates (a `messages` array there replaces the list) and
 * `{"$rewindTo": id}`, which drops that message and every later one from the conversation.
 *
 * Node ids are the records' ids. Each message continues the one before it in the list as it
 * stood when the message came, so a message written after a rewind forks from the message before
 * the one rewound to: the dropped messages stay in the DAG, a branch of their own, and HEAD
 * follows the conversation as it is now. A record whose id was seen replaces that node's content
 * in place (its place in the order kept): the turn holding it is committed again. `gemini`
 * records are assistant nodes, their `toolCalls` their inline tools, `tokens.total` their
 * tokens, `thoughts` kept in metadata and never in the reply; a `user` record holding only
 * `functionResponse` parts (v0.44 and later) is a tool node riding on the reply before it;
 * `info`, `warning` and `error` records are system nodes. The last reply is pending while a tool
 * call of it has not finished, and a last prompt while nothing answers it, until `finished`.
 */
export function parseGemini(records: readonly JsonValue[], options: TranscriptOptions): ParsedSession {
  const state: Replay = { byId: new Map(), nodes: [], list: [], meta: {} };
  for (const raw of records) replay(state, raw, options.sessionId);
  const { nodes, list, meta } = state;
  for (const n of nodes) if (n.role === 'tool') nameResponse(n, state.byId);
  const last = list.at(-1);
  if (last !== undefined && options.finished !== true && isOpen(last))
    last.metadata = { ...(asObject(last.metadata) ?? {}), pending: true };
  const session: Session = {
    id: options.sessionId,
    title: asString(meta.summary),
    agent_id: GEMINI_AGENT,
    model: null,
    project_id: null,
    head: last?.id ?? null,
    created_at: secondsOf(meta.startTime) ?? nodes[0]?.created_at ?? 0,
    metadata: {
      source: GEMINI_AGENT,
      gemini_session_id: asString(meta.sessionId),
      project_hash: asString(meta.projectHash),
      kind: asString(meta.kind),
    },
  };
  return { session, nodes };
}

/**
 * The records of a Gemini CLI session file: the lines of a `.jsonl` file, or, for the older
 * `.json` file (one object with `messages[]`), its metadata then its messages.
 */
export function readGemini(
  bytes: Uint8Array,
  options: RecordsOptions & { finished?: boolean } = {},
): { records: JsonValue[]; warnings: ReturnType<typeof readJsonl>['warnings'] } {
  const text = new TextDecoder().decode(bytes.subarray(0, 4096)).trimStart();
  if (text.startsWith('{') && !/^\{[^\n]*\}\s*\n\s*\{/.test(text)) {
    const doc = asObject(parsedOrNull(bytes));
    if (doc !== null && Array.isArray(doc.messages)) {
      const { messages, ...meta } = doc;
      return { records: [meta, ...readMessages(bytes).messages], warnings: [] };
    }
  }
  const read = readJsonl(bytes, options);
  return { records: [...read.records, ...read.tail.records], warnings: [...read.warnings, ...read.tail.warnings] };
}

/** The file as one JSON document, or null when it is none (then it is read line by line, as JSON Lines). */
function parsedOrNull(bytes: Uint8Array): JsonValue | null {
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as JsonValue;
  } catch {
    return null;
  }
}

interface Replay {
  readonly byId: Map<string, DagNode>;
  /** Every node, in the order first seen. */
  readonly nodes: DagNode[];
  /** The conversation as it stands: the nodes a new message continues from the last of. */
  list: DagNode[];
  meta: Obj;
}

function replay(state: Replay, raw: JsonValue, sessionId: string): void {
  const r = asObject(raw);
  if (r === null) return;
  if ('$rewindTo' in r) {
    const at = state.list.findIndex((n) => n.id === asString(r.$rewindTo));
    if (at >= 0) state.list = state.list.slice(0, at);
    return;
  }
  const set = asObject(r.$set);
  if (set !== null) {
    const { messages, ...rest } = set;
    state.meta = { ...state.meta, ...rest };
    if (Array.isArray(messages)) {
      state.list = [];
      for (const m of messages) message(state, m, sessionId);
    }
    return;
  }
  if (typeof r.id === 'string' && typeof r.type === 'string') message(state, r, sessionId);
  else if (state.nodes.length === 0) state.meta = { ...state.meta, ...r };
}

function message(state: Replay, raw: JsonValue, sessionId: string): void {
  const r = asObject(raw);
  const id = asString(r?.id);
  if (r === null || id === null || id === '') return;
  const shape = nodeShape(r);
  const seen = state.byId.get(id);
  if (seen !== undefined) {
    // Replaced in place: same id, same place, new content; the list keeps it where it was.
    Object.assign(seen, { ...shape, caller: seen.caller });
    if (!state.list.includes(seen)) state.list.push(seen);
    return;
  }
  const before = state.list.at(-1) ?? null;
  const node: DagNode = {
    id,
    session_id: sessionId,
    seq: state.nodes.length + 1,
    predecessor: before?.id ?? null,
    caller: shape.role === 'tool' ? (lastReply(state.list)?.id ?? null) : null,
    ...shape,
  };
  if (shape.role === 'tool' && node.caller === null) node.role = 'user';
  state.nodes.push(node);
  state.byId.set(id, node);
  state.list.push(node);
}

/** The node fields a record decides (not its edges). */
function nodeShape(r: Obj): Pick<DagNode, 'role' | 'content' | 'created_at' | 'metadata'> {
  const type = asString(r.type) ?? '';
  const created_at = secondsOf(r.timestamp) ?? 0;
  if (type === 'gemini') {
    const calls = Array.isArray(r.toolCalls) ? r.toolCalls.map(asObject).filter((c): c is Obj => c !== null) : [];
    const metadata: Obj = {};
    const names = calls.map((c) => asString(c.name)).filter((n): n is string => n !== null && n !== '');
    if (names.length > 0) metadata.inline_tools = names;
    const tokens = asObject(r.tokens);
    if (typeof tokens?.total === 'number') metadata.tokens = tokens.total;
    if (calls.length > 0) metadata.tool_calls = calls;
    if (r.thoughts !== undefined) metadata.thoughts = r.thoughts;
    if (r.model !== undefined) metadata.model = r.model;
    return { role: 'assistant', content: r.content ?? null, created_at, metadata };
  }
  const role: Role = type === 'user' ? (onlyToolResponses(r.content) ? 'tool' : 'user') : 'system';
  return { role, content: r.content ?? null, created_at, metadata: role === 'system' ? { type } : null };
}

/**
 * A tool node of `functionResponse` parts is named by them, and its calls leave its reply's
 * inline tools: each call is counted once, on its own node.
 */
function nameResponse(node: DagNode, byId: ReadonlyMap<string, DagNode>): void {
  const names = (node.content as JsonValue[])
    .map((p) => asString(asObject(asObject(p)?.functionResponse)?.name))
    .filter((n): n is string => n !== null && n !== '');
  if (names.length === 0) return;
  node.metadata = { ...(asObject(node.metadata) ?? {}), tool: names.join(', ') };
  const reply = node.caller === null ? undefined : byId.get(node.caller);
  const inline = asObject(reply?.metadata)?.inline_tools;
  if (reply === undefined || !Array.isArray(inline)) return;
  const left = [...inline];
  for (const name of names) {
    const at = left.indexOf(name);
    if (at >= 0) left.splice(at, 1);
  }
  const { inline_tools: _, ...rest } = asObject(reply.metadata)!;
  reply.metadata = left.length > 0 ? { ...rest, inline_tools: left } : rest;
}

function onlyToolResponses(content: JsonValue | undefined): boolean {
  return (
    Array.isArray(content) && content.length > 0 && content.every((p) => asObject(p)?.functionResponse !== undefined)
  );
}

function lastReply(list: readonly DagNode[]): DagNode | undefined {
  for (let i = list.length - 1; i >= 0; i--) {
    const n = list[i]!;
    if (n.role === 'assistant') return n;
    if (n.role === 'user') return undefined;
  }
  return undefined;
}

function isOpen(last: DagNode): boolean {
  if (last.role === 'user') return true;
  if (last.role !== 'assistant') return false;
  const calls = (asObject(last.metadata)?.tool_calls ?? []) as JsonValue[];
  return calls.some((c) => !CALL_DONE.has(asString(asObject(c)?.status) ?? ''));
}
