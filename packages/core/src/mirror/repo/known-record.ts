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
 *   [id, seq, role, predecessor, caller, flags, created_at, text, tool, tokens, blob, name?, inlineTools?]
 *
 * `flags`: 1 pending, 2 stored. `name` is null when `inlineTools` follows and the name is the one
 * `messageFileName` gives; `inlineTools` is written only when the node has some, so the records
 * of every other node are as before. Records of the object form (`{"n": {…}}`, versions before)
 * are still read (without inline tools: none of those versions wrote any).
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
  string[]?,
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
  if (ownName || n.inlineTools.length > 0) record.push(ownName ? n.name : null);
  if (n.inlineTools.length > 0) record.push([...n.inlineTools]);
  return record;
}

const str = (v: unknown): v is string => typeof v === 'string';
const strOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';
const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const ROLES: ReadonlySet<unknown> = new Set<Role>(['user', 'assistant', 'tool', 'system']);

/** The node a record holds, or null when it is not a whole record of this form (the log is then rebuilt). */
export function unpackKnown(r: unknown): Known | null {
  if (!Array.isArray(r) || r.length < 11 || r.length > 13) return null;
  const [id, seq, role, predecessor, caller, flags, created_at, text, tool, tokens, blob, name, inline] =
    r as unknown[];
  if (!str(id) || !num(seq) || !ROLES.has(role) || !strOrNull(predecessor) || !strOrNull(caller) || !num(flags))
    return null;
  if (!num(created_at) || !str(text) || !strOrNull(tool) || !(tokens === null || num(tokens)) || !str(blob))
    return null;
  if (name !== undefined && !strOrNull(name)) return null;
  if (inline !== undefined && !(Array.isArray(inline) && inline.length > 0 && inline.every(str))) return null;
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
    inlineTools: inline === undefined ? [] : [...(inline as string[])],
    name: '',
    blob,
    stored: undefined,
  };
  n.name = typeof name === 'string' ? name : messageFileName(n);
  if ((flags & 2) !== 0) n.stored = true;
  return n;
}
