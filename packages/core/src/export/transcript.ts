import { defaultMetadataKeys, type MetadataKeys } from '../model/commit-message.js';
import { textOf } from '../model/text.js';
import type { DagNode, JsonValue, Session } from '../model/types.js';

/** A tool call an assistant message asked for, as its content records it. */
export interface TranscriptToolCall {
  id: string | null;
  name: string;
  /** The call's arguments as JSON (2-space indent); null when the content records none. */
  arguments: string | null;
}

/** One message of an export, read for people. */
export interface TranscriptMessage {
  node: DagNode;
  /** Its text (textOf); '' when it has none. */
  text: string;
  /** Tool calls in an assistant message's content (`tool_calls`, or parts of type `tool_use`/`tool-call`). */
  toolCalls: TranscriptToolCall[];
  /** A tool result's tool name (metadata keys), or null. */
  tool: string | null;
  /** Tokens the message reports (metadata keys), or null. */
  tokens: number | null;
  /** The content as JSON when its text does not say all of it (parts, images, fields); else null. */
  raw: string | null;
}

/** One turn of an export: its messages and the commit that holds it. */
export interface TranscriptTurn {
  turn: number;
  commit: string;
  messages: TranscriptMessage[];
  /** Tokens summed over the turn; null when no message reports any. */
  tokens: number | null;
}

/** What an export renders: a branch's turns up to one, already redacted. */
export interface Transcript {
  sessionId: string;
  /** The session row (redacted), when the caller had it. */
  session: Session | null;
  branch: string;
  /** The branch's turn count (M of "turns 1–N of M"). */
  turns: number;
  /** Whether the export was redacted (`redaction: false` turns it off). */
  redacting: boolean;
  /** Redaction markers per rule over the exported messages, by rule name. */
  redactions: [string, number][];
  /** The commit-link template (`{commit}` replaced by the id), or null. */
  commitUrl: string | null;
  items: TranscriptTurn[];
}

const isObject = (v: JsonValue | undefined): v is { [key: string]: JsonValue } =>
  v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);

const pretty = (v: JsonValue): string => JSON.stringify(v, null, 2);

/** The tool calls a message's content records, in the shapes the common APIs write. */
export function toolCallsOf(content: JsonValue): TranscriptToolCall[] {
  const out: TranscriptToolCall[] = [];
  const add = (v: JsonValue) => {
    if (!isObject(v)) return;
    const fn = isObject(v.function) ? v.function : v;
    const name = typeof fn.name === 'string' ? fn.name : typeof v.toolName === 'string' ? v.toolName : null;
    if (name === null) return;
    const args = fn.arguments ?? v.input ?? v.args;
    out.push({
      id: typeof v.id === 'string' ? v.id : typeof v.toolCallId === 'string' ? v.toolCallId : null,
      name,
      arguments: args === undefined ? null : typeof args === 'string' ? args : pretty(args),
    });
  };
  if (isObject(content) && Array.isArray(content.tool_calls)) for (const c of content.tool_calls) add(c);
  if (Array.isArray(content))
    for (const part of content)
      if (isObject(part) && (part.type === 'tool_use' || part.type === 'tool-call' || part.type === 'function_call'))
        add(part);
  return out;
}

/** A message as an export shows it. */
export function transcriptMessage(node: DagNode, keys: MetadataKeys = defaultMetadataKeys): TranscriptMessage {
  const text = textOf(node.content);
  const toolCalls = toolCallsOf(node.content);
  // Text said all of it: a string, text parts alone, or `{ text, tool_calls }` (calls shown apart).
  const textPart = (v: JsonValue) =>
    isObject(v) && v.type === 'text' && typeof v.text === 'string' && Object.keys(v).length === 2;
  const plain =
    typeof node.content === 'string' ||
    node.content === null ||
    (Array.isArray(node.content) && node.content.every(textPart)) ||
    (isObject(node.content) &&
      Object.keys(node.content).every((k) => k === 'text' || k === 'tool_calls') &&
      typeof node.content.text === 'string');
  return {
    node,
    text,
    toolCalls,
    tool: keys.tool(node),
    tokens: keys.tokens(node),
    raw: plain ? null : pretty(node.content),
  };
}

/** A branch's path cut into turns at its user nodes (docs/design.md, 'Turns, commits and branches'). */
export function cutTurns(
  messages: readonly TranscriptMessage[],
  commits: ReadonlyMap<number, string>,
): TranscriptTurn[] {
  const turns: TranscriptTurn[] = [];
  for (const m of messages) {
    const last = turns.at(-1);
    if (last === undefined || (m.node.role === 'user' && last.messages.some((x) => x.node.role === 'user'))) {
      const turn = turns.length + 1;
      turns.push({ turn, commit: commits.get(turn) ?? '', messages: [m], tokens: null });
    } else last.messages.push(m);
  }
  for (const t of turns) for (const m of t.messages) if (m.tokens !== null) t.tokens = (t.tokens ?? 0) + m.tokens;
  return turns;
}
