import type { NodeFacts } from '../../model/commit-message.js';
import { messageFileName } from '../../model/names.js';
import type { Role } from '../../model/types.js';

/** A node as the mirror keeps it between syncs: its facts, file name and blob id. */
export interface Known extends NodeFacts {
  name: string;
  blob: string;
  /** Set once a commit holds the node (its blob is in the repository). */
  stored?: true;
}

/**
 * A node of the state log (see `repo/state.ts`) as one JSON array, not an object: its field
 * names were half of each record (~150 of ~340 bytes for a short message), and the file name is
 * not written when it is the one `messageFileName` gives (always, today):
 *
 *   [id, seq, role, predecessor, caller, flags, created_at, text, tool, tokens, blob, name?, inlineTools?, redactions?]
 *
 * `flags`: 1 pending, 2 stored. `name` is null when `inlineTools` follows and the name is the one
 * `messageFileName` gives; `inlineTools` is written only when the node has some, so the records
 * of every other node are as before. A log holding any other record is rebuilt from the DAG. `redactions` (the
 * node's redaction markers per rule) is written only when the node has some, `inlineTools` then
 * null when it has none.
 */
export type KnownRecord = [
  string,
  number,
  string,
  string | null,
  string | null,
  number,
  number,
  string,
  string | null,
  number | null,
  string,
  (string | null)?,
  (string[] | null)?,
  Record<string, number>?,
];

export function packKnown(n: Known): KnownRecord {
  const flags = (n.pending ? 1 : 0) | (n.stored ? 2 : 0);
  const record: KnownRecord = [
    n.id,
    n.seq,
    n.role,
    n.predecessor,
    n.caller,
    flags,
    n.created_at,
    n.text,
    n.tool,
    n.tokens,
    n.blob,
  ];
  const ownName = n.name !== messageFileName(n);
  const redactions = n.redactions !== undefined;
  if (ownName || n.inlineTools.length > 0 || redactions) record.push(ownName ? n.name : null);
  if (n.inlineTools.length > 0) record.push([...n.inlineTools]);
  else if (redactions) record.push(null);
  if (redactions) record.push({ ...n.redactions });
  return record;
}

const str = (v: unknown): v is string => typeof v === 'string';
const strOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';
const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isCounts = (v: unknown): boolean =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((c) => num(c) && c > 0);
const ROLES: ReadonlySet<unknown> = new Set<Role>(['user', 'assistant', 'tool', 'system']);

/** The node a record holds, or null when it is not a whole record of this form (the log is then rebuilt). */
export function unpackKnown(r: unknown): Known | null {
  if (!Array.isArray(r) || r.length < 11 || r.length > 14) return null;
  const [id, seq, role, predecessor, caller, flags, created_at, text, tool, tokens, blob, name, inline, redactions] =
    r as unknown[];
  if (!str(id) || !num(seq) || !ROLES.has(role) || !strOrNull(predecessor) || !strOrNull(caller) || !num(flags))
    return null;
  if (!num(created_at) || !str(text) || !strOrNull(tool) || !(tokens === null || num(tokens)) || !str(blob))
    return null;
  if (name !== undefined && !strOrNull(name)) return null;
  if (inline !== undefined && inline !== null && !(Array.isArray(inline) && inline.length > 0 && inline.every(str)))
    return null;
  if (redactions !== undefined && !isCounts(redactions)) return null;
  const n: Known = {
    id,
    seq,
    role: role as Role,
    predecessor,
    caller,
    pending: (flags & 1) !== 0,
    created_at,
    text,
    tool,
    tokens,
    inlineTools: Array.isArray(inline) ? [...(inline as string[])] : [],
    name: '',
    blob,
    stored: undefined,
  };
  if (redactions !== undefined) n.redactions = { ...(redactions as Record<string, number>) };
  n.name = typeof name === 'string' ? name : messageFileName(n);
  if ((flags & 2) !== 0) n.stored = true;
  return n;
}
