import { EntityGitError, sha1Hex, utf8Length } from '@entity-git/git';
import type { DagNode, Role } from './types.js';

/** Longest id accepted, in UTF-8 bytes. Longer ids get `INVALID_ID` (they cannot be a useful key). */
export const MAX_ID_BYTES = 1024;
/** Longest escaped id kept whole in a path segment or ref name; longer ones are cut and hashed. */
export const MAX_SEGMENT_BYTES = 100;

const SAFE = /^[A-Za-z0-9_-]$/;
const encoder = new TextEncoder();

/** Throws `INVALID_ID` for an id no store should hold: empty, not a string, or over MAX_ID_BYTES. */
export function assertId(id: unknown, what = 'id'): asserts id is string {
  if (typeof id !== 'string' || id.length === 0) {
    throw new EntityGitError('INVALID_ID', `${what} must be a non-empty string`, { id });
  }
  // Counted, not encoded: every node's ids are checked as it is read (a lone surrogate counts 3, as encoded).
  if (id.length > MAX_ID_BYTES / 3 && utf8Length(id) > MAX_ID_BYTES) {
    throw new EntityGitError('INVALID_ID', `${what} is longer than ${MAX_ID_BYTES} bytes`, {
      bytes: utf8Length(id),
    });
  }
}

/**
 * Reversible escaping of an id: `[A-Za-z0-9_-]` stay, a `.` stays unless it leads, ends, touches
 * another dot or starts a final `.lock`; every other byte of the UTF-8 form becomes `%XX`. The
 * result is safe as a file name, a path segment and a git ref component, and distinct ids give
 * distinct results (decoding gives the id back). NFC and NFD forms stay distinct.
 */
export function encodeId(id: string): string {
  const chars = Array.from(id);
  const lockAt = id.endsWith('.lock') ? chars.length - 5 : -1;
  let out = '';
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (SAFE.test(c)) {
      out += c;
    } else if (
      c === '.' &&
      i > 0 &&
      i < chars.length - 1 &&
      chars[i - 1] !== '.' &&
      chars[i + 1] !== '.' &&
      i !== lockAt
    ) {
      out += c;
    } else {
      for (const b of encoder.encode(c)) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
    }
  }
  return out;
}

/** The inverse of {@link encodeId}. */
export function decodeId(encoded: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    const c = encoded.charCodeAt(i);
    if (c === 0x25 /* % */) {
      bytes.push(parseInt(encoded.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(c);
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/**
 * An id as one path segment / ref component: {@link encodeId}, and when that is over
 * MAX_SEGMENT_BYTES, its first 80 bytes (cut between escapes), `+`, and 16 hex digits of the
 * SHA-1 of the id. `+` never appears in an encoded id, so cut names cannot meet whole ones.
 */
export function idSegment(id: string): string {
  const enc = encodeId(id);
  if (enc.length <= MAX_SEGMENT_BYTES) return enc;
  let cut = 80;
  while (cut > 0 && (enc[cut - 1] === '%' || enc[cut - 2] === '%')) cut--;
  return `${enc.slice(0, cut)}+${sha1Hex(encoder.encode(id)).slice(0, 16)}`;
}

const ROLE_INITIAL: Record<Role, string> = { user: 'u', assistant: 'a', tool: 't', system: 's' };

/** `<seq, 6 digits>-<u|a|t|s>-<id segment>.json` (docs/design.md, 'The session repository'). */
export function messageFileName(node: Pick<DagNode, 'seq' | 'role' | 'id'>): string {
  return `${String(node.seq).padStart(6, '0')}-${ROLE_INITIAL[node.role]}-${idSegment(node.id)}.json`;
}

/** The directory of a session under the root. */
export function sessionDirName(sessionId: string): string {
  return idSegment(sessionId);
}
