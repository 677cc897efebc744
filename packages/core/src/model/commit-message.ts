import type { NodeShape } from './derive.js';
import { decodeId, encodeId } from './names.js';
import { countMarkers } from '../redact/markers.js';
import { foldLine, textOf } from './text.js';
import type { DagNode, JsonValue } from './types.js';

/** What a commit message needs of a node, extracted once when the node is read. */
export interface NodeFacts extends NodeShape {
  created_at: number;
  /** The node's text, folded to one line and cut at 80 code points. */
  text: string;
  /** A tool node's tool name, or null. */
  tool: string | null;
  /**
   * The tools the node ran itself, holding their results (no tool node of their own), each name
   * folded and cut at 40 code points; `[]` for none. Counted in the message as tool nodes are.
   */
  inlineTools: string[];
  /** Tokens the node reports, or null. */
  tokens: number | null;
  /**
   * The redaction markers the node's content and metadata hold, per rule (docs/design.md,
   * 'Redaction'); absent when there are none or the mirror does not redact.
   */
  redactions?: Readonly<Record<string, number>>;
}

/**
 * Where the message looks in a node's metadata. Defaults: `metadata.tool`, `metadata.tokens`
 * or `metadata.usage.total_tokens`, `metadata.pending === true`, `metadata.inline_tools`; and,
 * for the accounting alone, `metadata.cost` or `metadata.usage.cost`.
 */
export interface MetadataKeys {
  tool(node: DagNode): string | null;
  /**
   * The names of the tools a node ran without a tool node of their own (an application that keeps
   * a reply's tool calls and results in the reply's row). Default: the non-blank strings of the
   * array `metadata.inline_tools` (nothing for a node without one).
   */
  inlineTools(node: DagNode): string[];
  tokens(node: DagNode): number | null;
  /**
   * What the node's step cost, in the source's own unit (OpenCode records US dollars); null when
   * the source records none. Read by `session_stats` (docs/design.md, 'Retention and accounting'),
   * never by a commit message, so it is no part of any commit id. Default: the finite number
   * `metadata.cost`, else `metadata.usage.cost`.
   */
  cost(node: DagNode): number | null;
  pending(node: DagNode): boolean;
}

const field = (v: JsonValue, key: string): JsonValue | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? v[key] : undefined;

export const defaultMetadataKeys: MetadataKeys = {
  tool: (n) => {
    const t = field(n.metadata, 'tool');
    return typeof t === 'string' && t.trim() !== '' ? t : null;
  },
  tokens: (n) => {
    const direct = field(n.metadata, 'tokens');
    if (typeof direct === 'number' && Number.isFinite(direct)) return direct;
    const total = field(field(n.metadata, 'usage') ?? null, 'total_tokens');
    return typeof total === 'number' && Number.isFinite(total) ? total : null;
  },
  cost: (n) => {
    const direct = field(n.metadata, 'cost');
    if (typeof direct === 'number' && Number.isFinite(direct)) return direct;
    const nested = field(field(n.metadata, 'usage') ?? null, 'cost');
    return typeof nested === 'number' && Number.isFinite(nested) ? nested : null;
  },
  pending: (n) => field(n.metadata, 'pending') === true,
  inlineTools: (n) => {
    const list = field(n.metadata, 'inline_tools');
    return Array.isArray(list) ? list.filter((t): t is string => typeof t === 'string' && t.trim() !== '') : [];
  },
};

export function nodeFacts(node: DagNode, keys: MetadataKeys = defaultMetadataKeys, redacting = false): NodeFacts {
  const tool = keys.tool(node);
  const facts: NodeFacts = {
    id: node.id,
    seq: node.seq,
    role: node.role,
    predecessor: node.predecessor,
    caller: node.caller,
    pending: keys.pending(node),
    created_at: node.created_at,
    text: foldLine(textOf(node.content), 80),
    tool: tool === null ? null : foldLine(tool, 40),
    tokens: keys.tokens(node),
    inlineTools: keys.inlineTools(node).map((t) => foldLine(t, 40)),
  };
  if (redacting) {
    const counts = new Map<string, number>();
    countMarkers(node.content, counts);
    countMarkers(node.metadata, counts);
    if (counts.size > 0) facts.redactions = Object.fromEntries(counts);
  }
  return facts;
}

/** The commit time of a turn: its latest `created_at`, whole seconds, never before 1970. */
export function turnTime(nodes: readonly NodeFacts[]): number {
  let t = 0;
  for (const n of nodes) t = Math.max(t, Math.floor(n.created_at));
  return t;
}

/**
 * The commit message of a turn (docs/design.md, 'The commit message'): subject, reply and tool lines, the meta line, and
 * the trailers reconcile reads. Parts whose data is absent are left out.
 */
export function commitMessage(sessionId: string, turn: number, nodes: readonly NodeFacts[]): string {
  const user = nodes.find((n) => n.role === 'user');
  const subjectText = user ? firstCodePoints(user.text, 60).trimEnd() : '';
  const lines = [subjectText === '' ? `turn ${turn}` : `turn ${turn}: ${subjectText}`];

  const body: string[] = [];
  const reply = [...nodes].reverse().find((n) => n.role === 'assistant' && n.text !== '');
  if (reply) body.push(`assistant: ${reply.text}`);
  const counts = new Map<string, number>();
  for (const n of nodes)
    for (const name of n.role === 'tool' && n.tool !== null ? [n.tool, ...n.inlineTools] : n.inlineTools)
      counts.set(name, (counts.get(name) ?? 0) + 1);
  if (counts.size > 0) body.push(`tools: ${countList(counts)}`);
  // The turn's redaction markers per rule, by rule name (docs/design.md, 'Redaction').
  const redacted = new Map<string, number>();
  for (const n of nodes) for (const r in n.redactions) redacted.set(r, (redacted.get(r) ?? 0) + n.redactions[r]!);
  if (redacted.size > 0)
    body.push(`redacted: ${countList(new Map([...redacted].sort(([a], [b]) => (a < b ? -1 : 1))))}`);
  if (body.length > 0) lines.push('', ...body);

  let first = Infinity;
  let last = -Infinity;
  let tokens: number | null = null;
  let tools = 0;
  for (const n of nodes) {
    first = Math.min(first, n.created_at);
    last = Math.max(last, n.created_at);
    if (n.tokens !== null) tokens = (tokens ?? 0) + n.tokens;
    if (n.role === 'tool') tools++;
    tools += n.inlineTools.length;
  }
  const meta = [`turn took ${(last - first).toFixed(1)}s`];
  if (tools > 0) meta.push(`${tools} ${tools === 1 ? 'tool' : 'tools'}`);
  if (tokens !== null) meta.push(`${tokens} tokens`);
  lines.push('', `[meta: ${meta.join(', ')}]`);

  const lastNode = nodes.reduce((a, b) => (b.seq > a.seq ? b : a));
  lines.push(
    '',
    `Session: ${encodeId(sessionId)}`,
    `Turn: ${turn}`,
    `Node: ${encodeId(lastNode.id)}`,
    `Seq: ${lastNode.seq}`,
  );
  return `${lines.join('\n')}\n`;
}

/** `a, b × 2`: counts by name, in the map's order. */
const countList = (counts: Map<string, number>): string =>
  [...counts].map(([name, c]) => (c > 1 ? `${name} × ${c}` : name)).join(', ');

/** The first `max` code points of `text` (a pair's halves never split), without an array of them. */
function firstCodePoints(text: string, max: number): string {
  let i = 0;
  for (let points = 0; points < max && i < text.length; points++) {
    const c = text.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  return i >= text.length ? text : text.slice(0, i);
}

/** The trailers of a commit message written by {@link commitMessage}, or null. */
export function parseTrailers(message: string): { session: string; turn: number; node: string; seq: number } | null {
  const m = /\nSession: (\S+)\nTurn: (\d+)\nNode: (\S+)\nSeq: (\d+)\n?$/.exec(message);
  if (!m) return null;
  return { session: decodeId(m[1]!), turn: Number(m[2]), node: decodeId(m[3]!), seq: Number(m[4]) };
}
