import type { DagNode, JsonValue, Session } from '@entity-git/core';
import { asObject, asString, secondsOf } from './jsonl.js';
import type { ParsedSession, TranscriptOptions } from './parsed-session.js';

/** `agent_id` of the sessions read from Codex CLI rollouts. */
export const CODEX_AGENT = 'codex';

type Item = { [key: string]: JsonValue };

/** Items the model produces; consecutive ones (until a tool output or a message of another role) are one response. */
const MODEL_ITEMS = new Set(['reasoning', 'function_call', 'custom_tool_call', 'local_shell_call', 'web_search_call']);
const OUTPUT_ITEMS = new Set(['function_call_output', 'custom_tool_call_output']);
/** `event_msg` payloads that end a turn. */
const TURN_END = new Set(['task_complete', 'turn_aborted']);
/** User messages Codex writes itself, the context of the session: system nodes, not prompts. */
const CONTEXT_PREFIX = /^\s*<(environment_context|user_instructions|permissions instructions)>/;

/**
 * The DAG of a Codex CLI rollout (`~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl`): records
 * `{timestamp, type, payload}` of types `session_meta`, `response_item`, `event_msg`,
 * `turn_context` (and the older shape: the items themselves, one per line). One linear path.
 * A response is the consecutive model items (`reasoning`, `message` of role assistant,
 * `function_call`…) up to a tool output: one assistant node. A `function_call_output` is a tool
 * node riding on the response that made its `call_id`. User messages are prompts, except the
 * `<environment_context>` / `<user_instructions>` ones Codex writes itself (system nodes).
 * Node ids are `l<n>`, n the 1-based line of the node's first record: appending keeps them.
 * The last step is pending until an `event_msg` `task_complete` (or `turn_aborted`) follows it,
 * or the caller says the file is `finished`.
 */
export function parseCodex(records: readonly JsonValue[], options: TranscriptOptions): ParsedSession {
  const { sessionId } = options;
  const rollout: Rollout = { sessionId, nodes: [], calls: new Map(), lastLine: new Map() };
  const { nodes, lastLine } = rollout;
  let endedAt = -1;
  let time = 0;
  let cwd: string | null = null;
  records.forEach((raw, i) => {
    const r = asObject(raw);
    if (!r) return;
    time = secondsOf(r.timestamp) ?? time;
    const type = asString(r.type);
    const payload = asObject(r.payload);
    if (
      i === 0 &&
      (type === 'session_meta' || (payload === null && typeof r.id === 'string' && r.type === undefined))
    ) {
      cwd = asString((payload ?? r).cwd);
      return;
    }
    if (type === 'event_msg') {
      if (TURN_END.has(asString(payload?.type) ?? '')) endedAt = i;
      return;
    }
    const item: Item | null =
      type === 'response_item' ? payload : payload === null && typeof r.type === 'string' ? r : null;
    if (!item) return;
    readItem(rollout, item, i, time);
  });
  const last = nodes.at(-1);
  // The model may still be answering, or the tools running: only a turn-end event closes the turn.
  if (last && options.finished !== true && !(endedAt > lastLine.get(last.id)!)) {
    const open =
      last.role === 'tool' && last.caller !== null
        ? nodes.filter((n) => n.caller === last.caller || n.id === last.caller)
        : [last];
    for (const n of open) n.metadata = { ...(asObject(n.metadata) ?? {}), pending: true };
  }
  const session: Session = {
    id: sessionId,
    title: null,
    agent_id: CODEX_AGENT,
    model: null,
    project_id: null,
    head: null,
    created_at: nodes[0]?.created_at ?? 0,
    metadata: { source: CODEX_AGENT, cwd },
  };
  return { session, nodes };
}

/** What the rollout's items have made so far. */
interface Rollout {
  readonly sessionId: string;
  readonly nodes: DagNode[];
  /** A call's `call_id` → the response that made it, and the tool's name. */
  readonly calls: Map<string, { node: DagNode; name: string | null }>;
  /** Node id → index of the last line that made it. */
  readonly lastLine: Map<string, number>;
}

/** Item `i` of the rollout: a model item joins the open response, a tool output or a message is a node. */
function readItem(rollout: Rollout, item: Item, i: number, time: number): void {
  const { sessionId, nodes, calls, lastLine } = rollout;
  const kind = asString(item.type) ?? '';
  const role = asString(item.role);
  const last = nodes.at(-1);
  const add = (n: Pick<DagNode, 'role' | 'content' | 'caller' | 'metadata'>): DagNode => {
    const node: DagNode = {
      id: `l${i + 1}`,
      session_id: sessionId,
      seq: nodes.length + 1,
      predecessor: last?.id ?? null,
      created_at: time,
      ...n,
    };
    nodes.push(node);
    lastLine.set(node.id, i);
    return node;
  };
  if (MODEL_ITEMS.has(kind) || (kind === 'message' && role === 'assistant')) {
    const node =
      last?.role === 'assistant' ? last : add({ role: 'assistant', content: [], caller: null, metadata: null });
    (node.content as JsonValue[]).push(item);
    node.created_at = time;
    lastLine.set(node.id, i);
    const callId = asString(item.call_id);
    if (callId !== null)
      calls.set(callId, { node, name: asString(item.name) ?? (kind === 'local_shell_call' ? 'shell' : null) });
    return;
  }
  if (OUTPUT_ITEMS.has(kind)) {
    const call = calls.get(asString(item.call_id) ?? '');
    const caller = call?.node.id ?? (last?.role === 'assistant' ? last.id : null);
    add({
      role: 'tool',
      content: item.output ?? null,
      caller,
      metadata: { tool: call?.name ?? null, call_id: asString(item.call_id) },
    });
    return;
  }
  if (kind === 'message') {
    const text = Array.isArray(item.content)
      ? (asString(asObject(item.content[0])?.text) ?? '')
      : (asString(item.content) ?? '');
    const system = role !== 'user' || CONTEXT_PREFIX.test(text);
    add({
      role: system ? 'system' : 'user',
      content: item.content ?? null,
      caller: null,
      metadata: system && role !== 'system' ? { role } : null,
    });
  }
}
