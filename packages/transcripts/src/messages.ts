import { EntityGitError, type DagNode, type JsonValue, type Role, type Session } from '@entity-git/core';
import { lineValues } from './json-values.js';
import { asObject, asString, readJsonl, type RecordsOptions, secondsOf } from './jsonl.js';
import type { ParsedSession, TranscriptOptions, TranscriptWarning } from './parsed-session.js';

/** `agent_id` of the sessions read from OpenAI-style message logs. */
export const MESSAGES_AGENT = 'openai-messages';

const ROLE_OF: Record<string, Role> = {
  system: 'system',
  developer: 'system',
  user: 'user',
  assistant: 'assistant',
  tool: 'tool',
  function: 'tool',
};

/**
 * The messages of an OpenAI-style log: a JSON array, an object with a `messages` array, or JSONL
 * (one message per line, read as {@link readJsonl} reads lines: a damaged line is skipped with a
 * warning, a last line without its newline is read only when `finished`). A JSON document that
 * does not parse yet is `TRANSCRIPT_INVALID` with `data.incomplete: true` when it may still be
 * being written (it does not end with `]` or `}`).
 */
export function readMessages(
  bytes: Uint8Array,
  options: RecordsOptions & { finished?: boolean } = {},
): { messages: JsonValue[]; warnings: TranscriptWarning[] } {
  let i = 0;
  while (
    i < bytes.length &&
    (bytes[i] === 0x20 ||
      bytes[i] === 0x0a ||
      bytes[i] === 0x0d ||
      bytes[i] === 0x09 ||
      bytes[i] === 0xef ||
      bytes[i] === 0xbb ||
      bytes[i] === 0xbf)
  )
    i++;
  if (bytes[i] !== 0x5b && !(bytes[i] === 0x7b && !hasNewlineBetweenRecords(bytes, i))) {
    const read = readJsonl(bytes, options);
    return { messages: [...read.records, ...read.tail.records], warnings: [...read.warnings, ...read.tail.warnings] };
  }
  const text = new TextDecoder().decode(bytes.subarray(i)).trimEnd();
  let doc: JsonValue;
  try {
    doc = JSON.parse(text) as JsonValue;
  } catch (cause) {
    throw new EntityGitError(
      'TRANSCRIPT_INVALID',
      `the message log is not JSON: ${(cause as Error).message}`,
      { incomplete: !/[\]}]$/.test(text) },
      { cause },
    );
  }
  const list = Array.isArray(doc) ? doc : asObject(doc)?.messages;
  if (!Array.isArray(list))
    throw new EntityGitError(
      'TRANSCRIPT_INVALID',
      'a message log is an array of messages, or an object with a "messages" array',
    );
  return { messages: list, warnings: [] };
}

/** Whether a document starting with `{` is JSONL: its first line holds whole JSON values. */
function hasNewlineBetweenRecords(bytes: Uint8Array, start: number): boolean {
  const nl = bytes.indexOf(0x0a, start);
  if (nl < 0) return false;
  const { values, damage } = lineValues(new TextDecoder().decode(bytes.subarray(start, nl)));
  return values.length > 0 && damage === null;
}

/**
 * The DAG of an OpenAI-style message log: one linear path (a log holds no forks). The n-th
 * message (1-based, in file order) is node `m<n>`: ids are a function of position, so appending
 * keeps every earlier id. A `tool` (or legacy `function`) message is a tool node riding on the
 * assistant whose `tool_calls` named its `tool_call_id` (else the latest assistant). Times come
 * from a message's `created_at` or `timestamp`, else the message before's, else 0 (the epoch): a
 * log without times still gives the same commit ids everywhere.
 */
export function parseMessages(messages: readonly JsonValue[], options: TranscriptOptions): ParsedSession {
  const { sessionId } = options;
  const nodes: DagNode[] = [];
  const callers = new Map<string, { node: string; name: string | null }>();
  let lastAssistant: string | null = null;
  let time = 0;
  messages.forEach((m, i) => {
    const msg = asObject(m);
    const role = ROLE_OF[asString(msg?.role) ?? ''];
    if (!msg || !role) {
      throw new EntityGitError(
        'TRANSCRIPT_INVALID',
        `message ${i + 1} has no role among ${Object.keys(ROLE_OF).join(', ')}`,
        { message: i + 1 },
      );
    }
    time = secondsOf(msg.created_at) ?? secondsOf(msg.timestamp) ?? time;
    const id = `m${i + 1}`;
    const metadata: { [key: string]: JsonValue } = {};
    for (const [k, v] of Object.entries(msg)) if (k !== 'role' && k !== 'content') metadata[k] = v;
    if (msg.role !== role) metadata.role = msg.role!;
    let caller: string | null = null;
    if (role === 'assistant') {
      lastAssistant = id;
      for (const call of Array.isArray(msg.tool_calls) ? msg.tool_calls : []) {
        const c = asObject(call);
        const callId = asString(c?.id);
        if (callId !== null) callers.set(callId, { node: id, name: asString(asObject(c?.function)?.name) });
      }
      const fn = asObject(msg.function_call);
      if (fn) callers.set(`function:${id}`, { node: id, name: asString(fn.name) });
    } else if (role === 'tool') {
      const call =
        callers.get(asString(msg.tool_call_id) ?? '') ?? (lastAssistant && callers.get(`function:${lastAssistant}`));
      caller = call ? call.node : lastAssistant;
      const name = asString(msg.name) ?? (call ? call.name : null);
      if (name !== null) metadata.tool = name;
    }
    const usage = asObject(msg.usage);
    if (usage && typeof usage.total_tokens === 'number') metadata.tokens = usage.total_tokens;
    nodes.push({
      id,
      session_id: sessionId,
      seq: i + 1,
      role,
      content: msg.content ?? null,
      predecessor: nodes.at(-1)?.id ?? null,
      caller,
      created_at: time,
      metadata: Object.keys(metadata).length === 0 ? null : metadata,
    });
  });
  const last = nodes.at(-1);
  // Waiting for a reply, or for the results of the calls the reply made: the turn is not over.
  if (last && options.finished !== true && !(last.role === 'assistant' && !hasCalls(messages.at(-1)!)))
    last.metadata = { ...(asObject(last.metadata) ?? {}), pending: true };
  const session: Session = {
    id: sessionId,
    title: null,
    agent_id: MESSAGES_AGENT,
    model: null,
    project_id: null,
    head: null,
    created_at: nodes[0]?.created_at ?? 0,
    metadata: { source: MESSAGES_AGENT },
  };
  return { session, nodes };
}

function hasCalls(m: JsonValue): boolean {
  const msg = asObject(m);
  return (Array.isArray(msg?.tool_calls) && msg.tool_calls.length > 0) || asObject(msg?.function_call) !== null;
}
