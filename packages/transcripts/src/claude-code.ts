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

/** @deprecated One type for every parser: {@link TranscriptOptions}. */
export type ClaudeCodeOptions = TranscriptOptions;

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
    const parsed = buildSession(
      recs,
      g.indexes,
      g.id,
      key === '' ? null : options.sessionId,
      options.finished === true,
    );
    if (parsed) out.push(parsed);
  }
  return out;
}

interface Response {
  node: DagNode;
  records: string[];
  lastStop: string | null;
}

function buildSession(
  recs: readonly Rec[],
  indexes: readonly number[],
  sessionId: string,
  parentSession: string | null,
  finished: boolean,
): ParsedSession | null {
  const nodes: DagNode[] = [];
  /** Record uuid → the node a record continuing from it continues from (null: a root). */
  const continues = new Map<string, string | null>();
  const responses = new Map<string, Response>();
  const responseOfNode = new Map<string, Response>();
  const toolUses = new Map<string, { node: string; name: string | null }>();
  const roleOf = new Map<string, DagNode['role']>();
  const nodeById = new Map<string, DagNode>();
  let lastTime = 0;
  /** Node id → index of the last record that made it; indexes of the turn-end records. */
  const lastIndex = new Map<string, number>();
  const endedAt: number[] = [];
  let first: Rec | null = null;

  const resolve = (uuid: JsonValue | undefined): string | null => {
    const u = asString(uuid);
    return u === null ? null : (continues.get(u) ?? null);
  };
  const timeOf = (r: Rec): number => {
    const t = secondsOf(r.timestamp);
    if (t !== null) lastTime = t;
    return lastTime;
  };
  const add = (n: Omit<DagNode, 'seq' | 'session_id'>): DagNode => {
    const node: DagNode = { ...n, session_id: sessionId, seq: nodes.length + 1 };
    nodes.push(node);
    roleOf.set(node.id, node.role);
    nodeById.set(node.id, node);
    lastIndex.set(node.id, at);
    return node;
  };

  let at = -1;
  for (const i of indexes) {
    at = i;
    const r = recs[i]!;
    const type = asString(r.type) ?? '';
    const uuid = asString(r.uuid);
    if (type === 'system' && TURN_END_SUBTYPES.has(asString(r.subtype) ?? '')) endedAt.push(i);
    if (uuid === null) continue;
    // Claude Code never logs a uuid twice; a copy (a resumed session) is the same record.
    if (continues.has(uuid)) continue;
    const subtype = asString(r.subtype);
    if (!CONVERSATION.has(type) || (type === 'system' && subtype !== 'compact_boundary')) {
      continues.set(uuid, resolve(r.parentUuid));
      continue;
    }
    first ??= r;
    const created_at = timeOf(r);
    const message = asObject(r.message);

    if (type === 'system') {
      // A compaction starts a new root in the file; the conversation goes on from where it was.
      const node = add({
        id: uuid,
        role: 'system',
        content: r.content ?? '',
        predecessor: resolve(r.logicalParentUuid ?? r.parentUuid),
        caller: null,
        created_at,
        metadata: pick(r, ['subtype', 'compactMetadata']),
      });
      continues.set(uuid, node.id);
      continue;
    }

    if (type === 'assistant') {
      const blocks = Array.isArray(message?.content)
        ? message.content
        : message?.content === undefined
          ? []
          : [message.content];
      const messageId = asString(message?.id) ?? uuid;
      let response = responses.get(messageId);
      // A record continues a response only from that response (or a result riding on it): an id
      // met again elsewhere (synthetic error messages) is another response.
      const from = resolve(r.parentUuid);
      const fromNode = from === null ? undefined : nodeById.get(from);
      if (response && from !== response.node.id && fromNode?.caller !== response.node.id) response = undefined;
      if (response) {
        (response.node.content as JsonValue[]).push(...blocks);
        response.records.push(uuid);
        response.node.created_at = Math.max(response.node.created_at, created_at);
        lastIndex.set(response.node.id, i);
      } else {
        const node = add({
          id: uuid,
          role: 'assistant',
          content: [...blocks],
          predecessor: resolve(r.parentUuid),
          caller: null,
          created_at,
          metadata: null,
        });
        response = { node, records: [uuid], lastStop: null };
        responses.set(messageId, response);
        responseOfNode.set(node.id, response);
      }
      response.lastStop = asString(message?.stop_reason);
      response.node.metadata = assistantMetadata(message, messageId, response.records);
      for (const b of blocks) {
        const block = asObject(b);
        if (block?.type === 'tool_use' && typeof block.id === 'string')
          toolUses.set(block.id, { node: response.node.id, name: asString(block.name) });
      }
      continues.set(uuid, response.node.id);
      continue;
    }

    // A user record: a prompt, or the results of tool calls.
    const content = message?.content ?? '';
    const results = Array.isArray(content) ? content.filter((b) => asObject(b)?.type === 'tool_result') : [];
    if (results.length === 0) {
      const node = add({
        id: uuid,
        role: 'user',
        content,
        predecessor: resolve(r.parentUuid),
        caller: null,
        created_at,
        metadata: pick(r, ['isMeta', 'isCompactSummary']),
      });
      continues.set(uuid, node.id);
      continue;
    }
    let last: string | null = resolve(r.parentUuid);
    results.forEach((b, k) => {
      const block = asObject(b)!;
      const use = toolUses.get(asString(block.tool_use_id) ?? '');
      let caller = use?.node ?? resolve(r.sourceToolAssistantUUID);
      if (caller === null && last !== null && roleOf.get(last) === 'assistant') caller = last;
      // A result rides on its caller: with the caller as predecessor the next reply's chain
      // passes through the caller even when the record named an earlier record of the response.
      const node = add({
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
    const rest = (content as JsonValue[]).filter((b) => asObject(b)?.type !== 'tool_result');
    if (rest.length > 0)
      last = add({
        id: `${uuid}.u`,
        role: 'user',
        content: rest,
        predecessor: last,
        caller: null,
        created_at,
        metadata: pick(r, ['isMeta']),
      }).id;
    continues.set(uuid, last);
  }

  if (first === null) return null;
  // A step nothing continues from yet is open — the agent may still be writing its turn —
  // unless the transcript closed it: a final stop reason, a turn-end record after it, or (for a
  // sidechain) the main conversation going on after it. Open nodes are `pending`, so the mirror
  // commits their turn once it closes: only a path's last step can be open (a tool result
  // belongs to its caller's step), never an earlier turn. A `finished` file has no open step;
  // if it grows after all, only the last turns of its paths can change.
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const rides = (n: DagNode) => n.role === 'tool' && n.caller !== null;
  const continued = new Set<string>();
  for (const n of nodes) {
    if (rides(n)) continue;
    let p = n.predecessor === null ? undefined : byId.get(n.predecessor);
    while (p !== undefined && rides(p)) p = byId.get(p.caller!);
    if (p !== undefined) continued.add(p.id);
  }
  const mainAfter = (i: number) =>
    parentSession !== null && recs.slice(i + 1).some((r) => r.isSidechain !== true && typeof r.uuid === 'string');
  for (const n of nodes) {
    if (finished || continued.has(rides(n) ? n.caller! : n.id)) continue;
    const at = lastIndex.get(n.id)!;
    const response = responseOfNode.get(n.id);
    const closed =
      (response !== undefined && FINAL_STOPS.has(response.lastStop ?? '')) ||
      endedAt.some((e) => e > at) ||
      mainAfter(at);
    if (!closed) n.metadata = { ...(asObject(n.metadata) ?? {}), pending: true };
  }

  const session: Session = {
    id: sessionId,
    title: null,
    agent_id: CLAUDE_CODE_AGENT,
    model: null,
    project_id: null,
    head: null,
    created_at: nodes[0]!.created_at,
    metadata: {
      source: CLAUDE_CODE_AGENT,
      cwd: asString(first.cwd),
      ...(parentSession === null ? {} : { parent_session: parentSession }),
    },
  };
  if (!Number.isFinite(session.created_at))
    throw new EntityGitError('TRANSCRIPT_INVALID', `session ${sessionId}: no readable timestamp`);
  return { session, nodes };
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
