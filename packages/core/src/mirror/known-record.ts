import type { NodeFacts } from '../model/commit-message.js';
import { messageFileName } from '../model/names.js';
import type { Role } from '../model/types.js';

/** A node as the mirror keeps it between syncs: its facts, file name and blob id. */
export interface Known extends NodeFacts {
  name: string;
  blob: string;
  /** Set once a commit holds the node (its blob is in the repository). */
  stored?: true;
}

/**
 * A node of the state log (see `repo-state.ts`) as one JSON array, not an object: its field
 * names were half of each record (~150 of ~340 bytes for a short message), and the file name is
 * not written when it is the one `messageFileName` gives (always, today):
 *
 *   [id, seq, role, predecessor, caller, flags, created_at, text, tool, tokens, blob, name?]
 *
 * `flags`: 1 pending, 2 stored. Records of the object form (`{"n": {…}}`, versions before) are
 * still read.
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
  string?,
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
  if (n.name !== messageFileName(n)) record.push(n.name);
  return record;
}

const str = (v: unknown): v is string => typeof v === 'string';
const strOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';
const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const ROLES: ReadonlySet<unknown> = new Set<Role>(['user', 'assistant', 'tool', 'system']);

/** The node a record holds, or null when it is not a whole record of this form (the log is then rebuilt). */
export function unpackKnown(r: unknown): Known | null {
  if (!Array.isArray(r) || r.length < 11 || r.length > 12) return null;
  const [id, seq, role, predecessor, caller, flags, created_at, text, tool, tokens, blob, name] = r as unknown[];
  if (!str(id) || !num(seq) || !ROLES.has(role) || !strOrNull(predecessor) || !strOrNull(caller) || !num(flags))
    return null;
  if (!num(created_at) || !str(text) || !strOrNull(tool) || !(tokens === null || num(tokens)) || !str(blob))
    return null;
  if (name !== undefined && !str(name)) return null;
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
    name: '',
    blob,
    stored: undefined,
  };
  n.name = name ?? messageFileName(n);
  if ((flags & 2) !== 0) n.stored = true;
  return n;
}
