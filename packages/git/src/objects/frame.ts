import { sha1Hex, sha1OfParts, type Codec } from '../codec/codec.js';
import { utf8, utf8Length } from '../bytes/utf8.js';

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag';

const OID = /^[0-9a-f]{40}$/;
export const isOid = (s: unknown): s is string => typeof s === 'string' && OID.test(s);

const encoder = new TextEncoder();

/**
 * The framed blob of a text (`blob <size>\0<utf-8>`). A large text is encoded straight into its
 * frame, so a 100 MB tool output is held once as bytes, not twice.
 */
export function frameText(text: string): Uint8Array {
  if (text.length < 1 << 20) return frame('blob', utf8(text));
  const size = utf8Length(text);
  const header = utf8(`blob ${size}\0`);
  const out = new Uint8Array(header.length + size);
  out.set(header, 0);
  encoder.encodeInto(text, out.subarray(header.length));
  return out;
}

/** The content part of a framed object (no copy). */
export function unframe(raw: Uint8Array): Uint8Array {
  return raw.subarray(raw.indexOf(0) + 1);
}

/**
 * The id git gives a file's bytes (`git hash-object`, no filters): what a tool reports in
 * `writtenBlobs` of the project auto-commit.
 */
export function gitBlobId(content: Uint8Array | string): string {
  return sha1Hex(frame('blob', typeof content === 'string' ? utf8(content) : content));
}

/** Where {@link objectId} frames a small object to hash it (reused: nothing allocated per object). */
const SCRATCH = new Uint8Array(64 << 10);

/**
 * An object's id from its type and content: the SHA-1 of its frame. A small object is framed in a
 * buffer of the module's and hashed in one call (a backfill hashes tens of thousands; a hash
 * object and a header array each cost more than the copy); a larger one is hashed in parts,
 * without a copy of its content.
 */
export function objectId(codec: Codec, type: ObjectType, content: Uint8Array): string {
  const size = String(content.length);
  const head = type.length + 1 + size.length + 1;
  if (head + content.length > SCRATCH.length) return sha1OfParts(codec, [utf8(`${type} ${size}\0`), content]);
  let o = 0;
  for (let i = 0; i < type.length; i++) SCRATCH[o++] = type.charCodeAt(i);
  SCRATCH[o++] = 0x20;
  for (let i = 0; i < size.length; i++) SCRATCH[o++] = size.charCodeAt(i);
  SCRATCH[o++] = 0;
  SCRATCH.set(content, o);
  return codec.sha1(SCRATCH.subarray(0, o + content.length));
}

/** `<type> <size>\0<content>`, the bytes git hashes. */
export function frame(type: ObjectType, content: Uint8Array): Uint8Array {
  const header = utf8(`${type} ${content.length}\0`);
  const raw = new Uint8Array(header.length + content.length);
  raw.set(header, 0);
  raw.set(content, header.length);
  return raw;
}
