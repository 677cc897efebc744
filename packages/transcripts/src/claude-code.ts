import { EntityGitError, type DagNode, type JsonValue, type Session } from '@entity-git/core';
import { asObject, asString, secondsOf } from './jsonl.js';
import type { ParsedSession, TranscriptOptions } from './parsed-session.js';

/** `agent_id` of the sessions read from Claude Code transcripts. */
export const CLAUDE_CODE_AGENT = 'claude-code';

type Rec = { [key: string]: JsonValue };

/**
 * `system` records that mark the end of a turn: after one of them the turn before is complete
 * even when the model's last record carries no `stop_reason`.
 */
const TURN_END_SUBTYPES = new Set(['turn_duration', 'stop_hook_summary']);
/** Stop reasons after which a model response is final (a `tool_use` stop waits for results). */
const FINAL_STOPS = new Set(['end_turn', 'stop_sequence', 'max_tokens', 'refusal']);
const CONVERSATION = new Set(['user', 'assistant', 'system']);

/**
 * The DAG of one Claude Code transcript (its complete records, in file order).
 *
 * Mapping (README "Claude Code"): the records of one model response (same `message.id`) are one
 * assistant node whose content is their blocks in order; each `tool_result` block is a `tool`
 * node whose caller is the response that named its `tool_use_id`; a `compact_boundary` is a
 * system node continuing from its `logicalParentUuid`; other `system` records and records of
 * other types are bookkeeping: they are no node, and a record continuing from one continues from
 * the node before it. So forks are only real forks (two different prompts or two different
 * responses continuing the same point), never parallel tool calls.
 *
 * Returns the main session first, then one session per sidechain (sub-agent) found inline, as
 * `<sessionId>.agent-<uuid of its first record>`. A file holding only sidechain records (an
 * `agent-*.jsonl` file) is itself the session.
 */
export function parseClaudeCode(records: readonly JsonValue[], options: TranscriptOptions): ParsedSession[] {
  const recs: Rec[] = [];
  for (const r of records) {
    const o = asObject(r);
    if (o) recs.push(o);
  }
  const conversational = (r: Rec) => typeof r.uuid === 'string' && CONVERSATION.has(asString(r.type) ?? '');
  const sidechainOnly = !recs.some((r) => conversational(r) && r.isSidechain !== true);

  // Group records: the main conversation, and each sidechain by the record it started from.
  const groupOf = new Map<string, string>();
  const groups = new Map<string, { id: string; indexes: number[] }>();
  const main = { id: options.sessionId, indexes: [] as number[] };
  groups.set('', main);
  recs.forEach((r, i) => {
    if (typeof r.uuid !== 'string') {
      main.indexes.push(i);
      return;
    }
    let key = '';
    if (r.isSidechain === true && !sidechainOnly) {
      const parent = asString(r.parentUuid);
      key = (parent !== null && groupOf.get(parent)) || r.uuid;
      if (!groups.has(key)) groups.set(key, { id: `${options.sessionId}.agent-${key}`, indexes: [] });
    }
    if (!groupOf.has(r.uuid)) groupOf.set(r.uuid, key);
    groups.get(key)!.indexes.push(i);
  });

  const out: ParsedSession[] = [];
  for (const [key, g] of groups) {
    const parsed = buildSession(recs, {
      indexes: g.indexes,
      sessionId: g.id,
      parentSession: key === '' ? null : options.sessionId,
      finished: options.finished === true,
    });
    if (parsed) out.push(parsed);
  }
  return out;
}

interface Response {
  node: DagNode;
  records: string[];
  lastStop: string | null;
}

/** One session's build: the nodes made so far and what the records read so far tell about them. */
interface Build {
  readonly sessionId: string;
  readonly nodes: DagNode[];
  /** Record uuid → the node a record continuing from it continues from (null: a root). */
  readonly continues: Map<string, string | null>;
  readonly responses: Map<string, Response>;
  readonly responseOfNode: Map<string, Response>;
  readonly toolUses: Map<string, { node: string; name: string | null }>;
  readonly roleOf: Map<string, DagNode['role']>;
  readonly nodeById: Map<string, DagNode>;
  /** Node id → index of the last record that made it; indexes of the turn-end records. */
  readonly lastIndex: Map<string, number>;
  readonly endedAt: number[];
  /** The first conversational record (its `cwd` is the session's). */
  first: Rec | null;
  /** The last readable timestamp: a record without one takes it. */
  lastTime: number;
  /** The index of the record being read. */
  at: number;
}

/** Which records of a file make one session (`indexes`), its id, the session it branched from, and whether the file is finished. */
interface SessionRecords {
  indexes: readonly number[];
  sessionId: string;
  parentSession: string | null;
  finished: boolean;
}

function buildSession(
  recs: readonly Rec[],
  { indexes, sessionId, parentSession, finished }: SessionRecords,
): ParsedSession | null {
  const b: Build = {
    sessionId,
    nodes: [],
    continues: new Map(),
    responses: new Map(),
    responseOfNode: new Map(),
    toolUses: new Map(),
    roleOf: new Map(),
    nodeById: new Map(),
    lastIndex: new Map(),
    endedAt: [],
    first: null,
    lastTime: 0,
    at: -1,
  };
  for (const i of indexes) {
    b.at = i;
    readRecord(b, recs[i]!, i);
  }
  if (b.first === null) return null;
  if (!finished) markOpenSteps(b, recs, parentSession);
  const session: Session = {
    id: sessionId,
    title: null,
    agent_id: CLAUDE_CODE_AGENT,
    model: null,
    project_id: null,
    head: null,
    created_at: b.nodes[0]!.created_at,
    metadata: {
      source: CLAUDE_CODE_AGENT,
      cwd: asString(b.first.cwd),
      ...(parentSession === null ? {} : { parent_session: parentSession }),
    },
  };
  if (!Number.isFinite(session.created_at))
    throw new EntityGitError('TRANSCRIPT_INVALID', `session ${sessionId}: no readable timestamp`);
  return { session, nodes: b.nodes };
}

const resolve = (b: Build, uuid: JsonValue | undefined): string | null => {
  const u = asString(uuid);
  return u === null ? null : (b.continues.get(u) ?? null);
};

const timeOf = (b: Build, r: Rec): number => {
  const t = secondsOf(r.timestamp);
  if (t !== null) b.lastTime = t;
  return b.lastTime;
};

const add = (b: Build, n: Omit<DagNode, 'seq' | 'session_id'>): DagNode => {
  const node: DagNode = { ...n, session_id: b.sessionId, seq: b.nodes.length + 1 };
  b.nodes.push(node);
  b.roleOf.set(node.id, node.role);
  b.nodeById.set(node.id, node);
  b.lastIndex.set(node.id, b.at);
  return node;
};

/** Record `i`: a turn end noted, bookkeeping passed through, or a node made or grown. */
function readRecord(b: Build, r: Rec, i: number): void {
  const type = asString(r.type) ?? '';
  const uuid = asString(r.uuid);
  if (type === 'system' && TURN_END_SUBTYPES.has(asString(r.subtype) ?? '')) b.endedAt.push(i);
  if (uuid === null) return;
  // Claude Code never logs a uuid twice; a copy (a resumed session) is the same record.
  if (b.continues.has(uuid)) return;
  const subtype = asString(r.subtype);
  if (!CONVERSATION.has(type) || (type === 'system' && subtype !== 'compact_boundary')) {
    b.continues.set(uuid, resolve(b, r.parentUuid));
    return;
  }
  b.first ??= r;
  const created_at = timeOf(b, r);
  const message = asObject(r.message);
  if (type === 'system') {
    // A compaction starts a new root in the file; the conversation goes on from where it was.
    const node = add(b, {
      id: uuid,
      role: 'system',
      content: r.content ?? '',
      predecessor: resolve(b, r.logicalParentUuid ?? r.parentUuid),
      caller: null,
      created_at,
      metadata: pick(r, ['subtype', 'compactMetadata']),
    });
    b.continues.set(uuid, node.id);
  } else if (type === 'assistant') readAssistant(b, { r, uuid, message, created_at });
  else readUser(b, { r, uuid, message, created_at });
}

/** A conversational record being read: the record, its uuid, its `message` and its time. */
interface Conversational {
  r: Rec;
  uuid: string;
  message: Rec | null;
  created_at: number;
}

/** An assistant record: a new response's node, or more blocks of the response it continues. */
function readAssistant(b: Build, { r, uuid, message, created_at }: Conversational): void {
  const blocks = Array.isArray(message?.content)
    ? message.content
    : message?.content === undefined
      ? []
      : [message.content];
  const messageId = asString(message?.id) ?? uuid;
  let response = b.responses.get(messageId);
  // A record continues a response only from that response (or a result riding on it): an id
  // met again elsewhere (synthetic error messages) is another response.
  const from = resolve(b, r.parentUuid);
  const fromNode = from === null ? undefined : b.nodeById.get(from);
  if (response && from !== response.node.id && fromNode?.caller !== response.node.id) response = undefined;
  if (response) {
    (response.node.content as JsonValue[]).push(...blocks);
    response.records.push(uuid);
    response.node.created_at = Math.max(response.node.created_at, created_at);
    b.lastIndex.set(response.node.id, b.at);
  } else {
    const node = add(b, {
      id: uuid,
      role: 'assistant',
      content: [...blocks],
      predecessor: resolve(b, r.parentUuid),
      caller: null,
      created_at,
      metadata: null,
    });
    response = { node, records: [uuid], lastStop: null };
    b.responses.set(messageId, response);
    b.responseOfNode.set(node.id, response);
  }
  response.lastStop = asString(message?.stop_reason);
  response.node.metadata = assistantMetadata(message, messageId, response.records);
  for (const x of blocks) {
    const block = asObject(x);
    if (block?.type === 'tool_use' && typeof block.id === 'string')
      b.toolUses.set(block.id, { node: response.node.id, name: asString(block.name) });
  }
  b.continues.set(uuid, response.node.id);
}

/** A user record: a prompt, or the results of tool calls (and any other blocks after them). */
function readUser(b: Build, { r, uuid, message, created_at }: Conversational): void {
  const content = message?.content ?? '';
  const results = Array.isArray(content) ? content.filter((x) => asObject(x)?.type === 'tool_result') : [];
  if (results.length === 0) {
    const node = add(b, {
      id: uuid,
      role: 'user',
      content,
      predecessor: resolve(b, r.parentUuid),
      caller: null,
      created_at,
      metadata: pick(r, ['isMeta', 'isCompactSummary']),
    });
    b.continues.set(uuid, node.id);
    return;
  }
  let last: string | null = resolve(b, r.parentUuid);
  results.forEach((x, k) => {
    const block = asObject(x)!;
    const use = b.toolUses.get(asString(block.tool_use_id) ?? '');
    let caller = use?.node ?? resolve(b, r.sourceToolAssistantUUID);
    if (caller === null && last !== null && b.roleOf.get(last) === 'assistant') caller = last;
    // A result rides on its caller: with the caller as predecessor the next reply's chain
    // passes through the caller even when the record named an earlier record of the response.
    const node = add(b, {
      id: k === 0 ? uuid : `${uuid}.${k}`,
      role: 'tool',
      content: block,
      predecessor: caller ?? last,
      caller,
      created_at,
      metadata: { tool: use?.name ?? null, tool_use_id: asString(block.tool_use_id) },
    });
    last = node.id;
  });
  const rest = (content as JsonValue[]).filter((x) => asObject(x)?.type !== 'tool_result');
  if (rest.length > 0)
    last = add(b, {
      id: `${uuid}.u`,
      role: 'user',
      content: rest,
      predecessor: last,
      caller: null,
      created_at,
      metadata: pick(r, ['isMeta']),
    }).id;
  b.continues.set(uuid, last);
}

/**
 * A step nothing continues from yet is open — the agent may still be writing its turn — unless
 * the transcript closed it: a final stop reason, a turn-end record after it, or (for a sidechain)
 * the main conversation going on after it. Open nodes are `pending`, so the mirror commits their
 * turn once it closes: only a path's last step can be open (a tool result belongs to its caller's
 * step), never an earlier turn. A `finished` file has no open step (this is not called for it);
 * if it grows after all, only the last turns of its paths can change.
 */
function markOpenSteps(b: Build, recs: readonly Rec[], parentSession: string | null): void {
  const byId = new Map(b.nodes.map((n) => [n.id, n]));
  const rides = (n: DagNode) => n.role === 'tool' && n.caller !== null;
  const continued = new Set<string>();
  for (const n of b.nodes) {
    if (rides(n)) continue;
    let p = n.predecessor === null ? undefined : byId.get(n.predecessor);
    while (p !== undefined && rides(p)) p = byId.get(p.caller!);
    if (p !== undefined) continued.add(p.id);
  }
  const mainAfter = (i: number) =>
    parentSession !== null && recs.slice(i + 1).some((r) => r.isSidechain !== true && typeof r.uuid === 'string');
  for (const n of b.nodes) {
    if (continued.has(rides(n) ? n.caller! : n.id)) continue;
    const at = b.lastIndex.get(n.id)!;
    const response = b.responseOfNode.get(n.id);
    const closed =
      (response !== undefined && FINAL_STOPS.has(response.lastStop ?? '')) ||
      b.endedAt.some((e) => e > at) ||
      mainAfter(at);
    if (!closed) n.metadata = { ...(asObject(n.metadata) ?? {}), pending: true };
  }
}

function assistantMetadata(message: Rec | null, messageId: string, records: readonly string[]): JsonValue {
  const usage = asObject(message?.usage);
  const input = usage && typeof usage.input_tokens === 'number' ? usage.input_tokens : 0;
  const output = usage && typeof usage.output_tokens === 'number' ? usage.output_tokens : 0;
  return {
    message_id: messageId,
    model: asString(message?.model),
    records: [...records],
    ...(usage ? { usage, tokens: input + output } : {}),
  };
}

/** The named fields a record has (null when none): what a node keeps of the record around it. */
function pick(r: Rec, keys: readonly string[]): JsonValue {
  const out: Rec = {};
  for (const k of keys) if (r[k] !== undefined) out[k] = r[k]!;
  return Object.keys(out).length === 0 ? null : out;
}
