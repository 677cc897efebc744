import {
  EntityGitError,
  ROLES,
  validateNode,
  validateSession,
  type DagNode,
  type JsonValue,
  type Role,
  type Session,
} from '@entity-git/core';
import { invalidRow, nullableText, num, text } from '../rows.js';
import type { ResolvedNodesMapping, ResolvedSessionsMapping } from './resolved-mapping.js';
import { RowValues, child, countOf, textOf, without } from './row-values.js';
import { secondsOf } from './time-values.js';

type Row = Record<string, unknown>;

/** The alias of the derived seq in a page's rows (a rank by time, then id). */
export const RANK_ALIAS = 'entity_git_seq';
/** The alias of a linear session's predecessor in a page's rows (the row before, in its order). */
export const PREV_ALIAS = 'entity_git_prev';

/** A node read through a mapping, and whether it is open once nothing continues from it. */
export interface MappedNode {
  node: DagNode;
  /** Open while no node continues from it: the mapping's `open` rule holds for its row. */
  openCandidate: boolean;
}

const jsonSets = new WeakMap<readonly string[], ReadonlySet<string>>();
function jsonSet(list: readonly string[]): ReadonlySet<string> {
  let set = jsonSets.get(list);
  if (!set) jsonSets.set(list, (set = new Set(list)));
  return set;
}

/**
 * A row of an application's messages table as a node. Its `metadata` is entity-git's, always an
 * object: `row` holds every column a node field does not hold as it is (the role as the
 * application wrote it among them; JSON columns parsed; NULL columns left out; the content's
 * value taken out of the column it came from, so it is stored once), beside the facts the commit
 * message reads — `tool`, `tokens`, `inline_tools` — and `pending` while the node is open.
 */
export function decodeMappedNode(r: Row, m: ResolvedNodesMapping): MappedNode {
  const values = new RowValues(r, jsonSet(m.json));
  const id = text(r[m.id]);
  const where = `node ${JSON.stringify(id)}`;
  const role = mappedRole(values, m, where);
  const parts = typedParts(values, m);
  // The reply from typed parts leaves the parts in `row` as they are (reasoning among them).
  const content = parts !== null && parts.text !== null ? null : values.first(m.content);
  const metadata: Record<string, JsonValue> = { row: rowOf(values, m, content?.spec ?? null) };
  if (role === 'tool') {
    const tool = textOf(values.first(m.tool)?.value);
    if (tool !== null) metadata.tool = tool;
  }
  let tokens: number | null = null;
  for (const spec of m.tokens) {
    const n = countOf(values.read(spec));
    if (n !== null) tokens = (tokens ?? 0) + n;
  }
  if (tokens !== null) metadata.tokens = tokens;
  const inline = [...inlineTools(values, m), ...(parts?.tools ?? [])];
  if (inline.length > 0) metadata.inline_tools = inline;
  const seq = m.seq.kind === 'rank' ? num(r[RANK_ALIAS]) : num(r[m.seq.column]) + m.seq.shift;
  const node: DagNode = {
    id,
    session_id: text(r[m.session_id]),
    seq,
    role,
    content: parts?.text ?? content?.value ?? null,
    predecessor: nullableText(m.linear ? r[PREV_ALIAS] : m.predecessor === null ? null : r[m.predecessor]),
    caller: nullableText(m.caller === null ? null : r[m.caller]),
    created_at: secondsOf(r[m.created_at], m.createdFormat, `created_at of ${where}`) ?? 0,
    metadata,
  };
  try {
    validateNode(node);
  } catch (err) {
    throw invalidRow(err, `[sqlite] the row of ${where} is not a valid node`, { nodeId: id });
  }
  return { node, openCandidate: isOpenCandidate(values, m, node, inline.length) };
}

/** A row of an application's sessions table as a session. */
export function decodeMappedSession(r: Row, m: ResolvedSessionsMapping): Session {
  const values = new RowValues(r, jsonSet(m.json));
  const id = text(r[m.id]);
  const session: Session = {
    id,
    title: textOf(values.first(m.title)?.value),
    agent_id: textOf(values.first(m.agent_id)?.value),
    model: textOf(values.first(m.model)?.value),
    project_id: textOf(values.first(m.project_id)?.value),
    head: textOf(values.first(m.head)?.value),
    created_at: secondsOf(r[m.created_at], m.createdFormat, `created_at of session ${JSON.stringify(id)}`) ?? 0,
    metadata: values.first(m.metadata)?.value ?? null,
  };
  try {
    validateSession(session);
  } catch (err) {
    throw invalidRow(err, `[sqlite] the row of session ${JSON.stringify(id)} is not a valid session`, {
      sessionId: id,
    });
  }
  return session;
}

function mappedRole(values: RowValues, m: ResolvedNodesMapping, where: string): Role {
  const raw = values.first(m.role.from)?.value;
  const text = typeof raw === 'string' ? raw : null;
  const role = text === null ? undefined : Object.hasOwn(m.role.values, text) ? m.role.values[text] : text;
  if (role === undefined || !ROLES.includes(role as Role)) {
    throw new EntityGitError(
      'DB_ERROR',
      `[sqlite] the row of ${where} has the role ${JSON.stringify(raw ?? null)}, which is none of ${ROLES.join(', ')}; map it in mapping.nodes.role.values`,
      { value: raw ?? null },
    );
  }
  return role as Role;
}

function rowOf(
  values: RowValues,
  m: ResolvedNodesMapping,
  contentSpec: { column: string; path: readonly string[] } | null,
): JsonValue {
  const out: Record<string, JsonValue> = {};
  for (const column of m.keep) {
    if (contentSpec !== null && contentSpec.column === column && contentSpec.path.length === 0) continue;
    let v = values.column(column);
    if (contentSpec !== null && contentSpec.column === column) v = without(v, contentSpec.path);
    if (v !== null) out[column] = v;
  }
  return out;
}

function inlineTools(values: RowValues, m: ResolvedNodesMapping): string[] {
  if (m.inlineTools === null) return [];
  const list = values.first(m.inlineTools.from)?.value;
  if (!Array.isArray(list)) return [];
  const names: string[] = [];
  for (const call of list) {
    if (m.inlineTools.answered !== null && !carriesResult(call, m.inlineTools.answered)) continue;
    let name: string | null = typeof call === 'string' ? call : null;
    for (const path of m.inlineTools.name) {
      if (name !== null) break;
      let v: JsonValue | undefined = call;
      for (const key of path) v = child(v, key);
      if (typeof v === 'string' && v.trim() !== '') name = v;
    }
    if (name !== null && name.trim() !== '') names.push(name);
  }
  return names;
}

/**
 * A message kept as an array of typed parts: its reply is the text of the parts of the `text`
 * types (null when there is none), its tools the names of the parts whose type has the tool
 * prefix (`tool-getWeather` → `getWeather`); other parts (`step-start`, `reasoning`) are neither.
 */
function typedParts(values: RowValues, m: ResolvedNodesMapping): { text: string | null; tools: string[] } | null {
  if (m.parts === null) return null;
  const list = values.first(m.parts.from)?.value;
  if (!Array.isArray(list)) return null;
  const texts: string[] = [];
  const tools: string[] = [];
  for (const part of list) {
    const type = textOf(child(part, 'type'));
    if (type === null) continue;
    const text = child(part, 'text');
    if (m.parts.text.includes(type) && typeof text === 'string') texts.push(text);
    else if (type.startsWith(m.parts.toolPrefix) && type.length > m.parts.toolPrefix.length)
      tools.push(type.slice(m.parts.toolPrefix.length));
  }
  return { text: texts.length > 0 ? texts.join('') : null, tools };
}

function isOpenCandidate(values: RowValues, m: ResolvedNodesMapping, node: DagNode, inline: number): boolean {
  if (m.open.roles.includes(node.role)) return true;
  if (node.predecessor === null && node.caller === null && m.open.roots.includes(node.role)) return true;
  if (node.role !== 'assistant') return false;
  const calls = values.first(m.open.calls)?.value;
  if (Array.isArray(calls) && calls.some((c) => !carriesResult(c, m.open.answered))) return true;
  return m.open.empty && inline === 0 && (node.content === null || node.content === '');
}

/** Whether a call holds a non-null value at one of `paths` (its result, written in its row). */
function carriesResult(call: JsonValue, paths: readonly (readonly string[])[]): boolean {
  return paths.some((path) => {
    let v: JsonValue | undefined = call;
    for (const key of path) v = child(v, key);
    return v !== undefined && v !== null;
  });
}
