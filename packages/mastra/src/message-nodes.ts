import type { DagNode, JsonValue, Role } from '@entity-git/core';
import { isObject, readStoredContent, stringField, type JsonObject, type StoredContent } from './stored-content.js';
import { tokensOf } from './usage.js';

/** A `mastra_messages` row, read: what the mapping needs of it. */
export interface StoredMessage {
  id: string;
  threadId: string;
  role: Role;
  /** The `content` column as the driver gave it (JSON text; parsed already from a json column). */
  content: unknown;
  /** The `type` column (`v2`, or a format-1 row's `text` / `tool-call` / `tool-result`), or null. */
  type: string | null;
  /** The row's `resourceId`, or null. */
  resourceId: string | null;
  /** Seconds since the epoch. */
  createdAt: number;
}

/**
 * What the walk over a thread carries from one message to the next: the last node the
 * conversation continues from, and which node made each tool call (format-1 results are rows of
 * their own, after the assistant row that called them).
 */
export interface ThreadWalk {
  /** The thread's own `resourceId`: a message's is kept only when it differs. */
  resourceId: string | null;
  /** The latest node that does not ride on another (null before the first). */
  last: string | null;
  /** The latest assistant node. */
  lastAssistant: string | null;
  /** toolCallId → the assistant node whose content made the call. */
  callers: Map<string, string>;
}

/** The nodes of one message (seq still 0), and whether it is still waiting for the model. */
export interface MessageNodes {
  nodes: DagNode[];
  /**
   * Set when this message, were it the thread's last, leaves its turn open: a prompt without a
   * reply yet, a tool call without its result, results the model has not answered yet.
   */
  open: boolean;
}

/** Node metadata keys the commit message reads (`metadata.tool`, `.tokens`, `.pending`). */
const RESERVED = new Set(['tool', 'tokens', 'pending']);

/** Tool states of a call still in flight (AI SDK v4's, and the approval states of Mastra 1.x). */
const IN_FLIGHT = new Set(['partial-call', 'call', 'approval-requested', 'approval-responded']);

/**
 * The DAG nodes of a message, in the order they get their seqs: the message's own node, then the
 * results of its tool calls (format 2), each a `tool` node riding on it. A format-1 `tool` row
 * is only its results. Updates `walk`.
 */
export function messageNodes(message: StoredMessage, walk: ThreadWalk): MessageNodes {
  const stored = readStoredContent(message.content);
  if (message.role === 'tool') return toolRowNodes(message, stored, walk);

  const metadata: JsonObject = {};
  if (message.type !== null && message.type !== 'v2') metadata.type = message.type;
  if (message.resourceId !== null && message.resourceId !== walk.resourceId) metadata.resourceId = message.resourceId;

  let content: JsonValue;
  let results: DagNode[] = [];
  let open = message.role === 'user';
  if (stored.format === 2) {
    const { parts, fields } = stored;
    for (const [key, value] of Object.entries(fields)) {
      // Beside parts, `content` and `toolInvocations` repeat what the parts hold.
      if (key === 'format' || key === 'parts' || key === 'content') continue;
      if (parts !== null && key === 'toolInvocations') continue;
      // The keys the commit message reads are the mirror's own, never a field of the content.
      metadata[RESERVED.has(key) ? `content.${key}` : key] = value;
    }
    if (parts === null) content = fields.content ?? null;
    else if (message.role === 'assistant') {
      const split = splitToolResults(message, parts);
      content = split.parts;
      results = split.results;
      open = split.open;
      for (const callId of split.callIds) walk.callers.set(callId, message.id);
    } else content = parts;
    const tokens = message.role === 'assistant' ? tokensOf(fields.metadata) : null;
    if (tokens !== null) metadata.tokens = tokens;
  } else {
    content = stored.value;
    if (message.role === 'assistant' && Array.isArray(stored.value)) {
      const parts = stored.value;
      open = partType(parts.at(-1)) === 'tool-call';
      for (const p of parts) {
        const callId = stringField(p, 'toolCallId');
        if (partType(p) === 'tool-call' && callId !== null) walk.callers.set(callId, message.id);
      }
    }
  }

  const node: DagNode = {
    id: message.id,
    session_id: message.threadId,
    seq: 0,
    role: message.role,
    content,
    predecessor: walk.last,
    caller: null,
    created_at: message.createdAt,
    metadata: Object.keys(metadata).length > 0 ? metadata : null,
  };
  walk.last = message.id;
  if (message.role === 'assistant') walk.lastAssistant = message.id;
  return { nodes: [node, ...results], open };
}

/**
 * A format-2 assistant message's parts with each call's result taken out (`toolInvocation`
 * keeps `state`, `toolCallId`, `toolName`, `args`), and the results as `tool` nodes. Node ids are
 * `<message id>.<toolCallId>` (`.<k>` added for the k-th repeat of one call id in the message;
 * `<message id>.<part index>` for a call without an id): a provider may number its calls afresh
 * in every response, so the call id alone need not be unique in a thread.
 */
function splitToolResults(
  message: StoredMessage,
  parts: JsonValue[],
): { parts: JsonValue[]; results: DagNode[]; open: boolean; callIds: string[] } {
  const out: JsonValue[] = [];
  const callIds: string[] = [];
  const results: DagNode[] = [];
  const used = new Map<string, number>();
  let inFlight = false;
  let lastKind: string | null = null;
  for (const [index, part] of parts.entries()) {
    const kind = partType(part);
    if (kind !== 'step-start') lastKind = kind;
    const invocation = kind === 'tool-invocation' && isObject(part) ? part.toolInvocation : undefined;
    if (!isObject(invocation)) {
      out.push(part);
      continue;
    }
    const { result, errorText, ...call } = invocation;
    out.push({ ...(part as JsonObject), toolInvocation: call });
    const state = typeof invocation.state === 'string' ? invocation.state : null;
    const callId = stringField(invocation, 'toolCallId');
    if (callId !== null) callIds.push(callId);
    const hasResult = Object.hasOwn(invocation, 'result');
    const failed = !hasResult && typeof errorText === 'string';
    if (!hasResult && !failed) {
      if (state === null || IN_FLIGHT.has(state)) inFlight = true;
      continue;
    }
    const base = `${message.id}.${callId !== null && callId !== '' ? callId : index}`;
    const seen = (used.get(base) ?? 0) + 1;
    used.set(base, seen);
    const metadata: JsonObject = {};
    if (callId !== null) metadata.toolCallId = callId;
    const tool = stringField(invocation, 'toolName');
    if (tool !== null) metadata.tool = tool;
    if (state !== null && state !== 'result') metadata.state = state;
    if (failed) metadata.isError = true;
    results.push({
      id: seen === 1 ? base : `${base}.${seen}`,
      session_id: message.threadId,
      seq: 0,
      role: 'tool',
      content: failed ? (errorText as string) : (result ?? null),
      predecessor: message.id,
      caller: message.id,
      created_at: message.createdAt,
      metadata,
    });
  }
  // Nothing said yet, or results the model has not answered: the next step is still to come.
  return { parts: out, results, open: inFlight || lastKind === null || lastKind === 'tool-invocation', callIds };
}

/**
 * A format-1 `tool` row: each `tool-result` part a `tool` node riding on the assistant node that
 * made the call (else the latest assistant node), id `<row id>.<toolCallId>`; content that is
 * not an array of parts is one result, id the row's. Without any assistant node before it, a
 * result rides on nothing: it continues the conversation like a message.
 */
function toolRowNodes(message: StoredMessage, stored: StoredContent, walk: ThreadWalk): MessageNodes {
  const value = stored.format === 2 ? (stored.parts ?? stored.fields.content ?? null) : stored.value;
  const results: Array<{ id: string; content: JsonValue; callId: string | null; part: JsonValue | null }> = [];
  if (Array.isArray(value) && value.some((p) => partType(p) === 'tool-result')) {
    const used = new Map<string, number>();
    for (const [index, part] of value.entries()) {
      if (partType(part) !== 'tool-result' || !isObject(part)) continue;
      const callId = stringField(part, 'toolCallId');
      const base = `${message.id}.${callId !== null && callId !== '' ? callId : index}`;
      const seen = (used.get(base) ?? 0) + 1;
      used.set(base, seen);
      const content = Object.hasOwn(part, 'result') ? part.result! : (part.output ?? null);
      results.push({ id: seen === 1 ? base : `${base}.${seen}`, content, callId, part });
    }
  } else results.push({ id: message.id, content: value, callId: null, part: null });

  const nodes = results.map((r): DagNode => {
    const caller = (r.callId !== null ? walk.callers.get(r.callId) : undefined) ?? walk.lastAssistant;
    const metadata: JsonObject = {};
    if (r.callId !== null) metadata.toolCallId = r.callId;
    const tool = stringField(r.part ?? null, 'toolName');
    if (tool !== null) metadata.tool = tool;
    if (isObject(r.part) && r.part.isError === true) metadata.isError = true;
    if (message.type !== null && message.type !== 'v2') metadata.type = message.type;
    const node: DagNode = {
      id: r.id,
      session_id: message.threadId,
      seq: 0,
      role: 'tool',
      content: r.content,
      predecessor: caller ?? walk.last,
      caller,
      created_at: message.createdAt,
      metadata: Object.keys(metadata).length > 0 ? metadata : null,
    };
    if (caller === null) walk.last = node.id;
    return node;
  });
  return { nodes, open: true };
}

function partType(part: JsonValue | undefined): string | null {
  return stringField(part ?? null, 'type');
}
