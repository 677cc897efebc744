import type { JsonValue } from '@entity-git/core';

/**
 * A value of a LangChain message as JSON, the way `JSON.stringify` writes it (a `toJSON` is
 * honoured, an undefined property left out, a non-finite number null), except that bytes
 * (`Uint8Array` and other views, which content blocks may carry) become base64 text and a
 * BigInt its decimal text, instead of an object of indices or a throw. Throws a `TypeError` on
 * a cycle; the caller names the message.
 */
export function toJson(value: unknown): JsonValue {
  if (value === undefined) return null;
  const text = JSON.stringify(value, replaceBytes);
  return text === undefined ? null : (JSON.parse(text) as JsonValue);
}

/**
 * An identity for a value: its JSON text with every object's keys in code point order, so two
 * copies of one message read from different checkpoints (or re-serialised by another process)
 * compare equal whatever order their keys came back in.
 */
export function keyOf(value: unknown): string {
  return JSON.stringify(value, (key, v: unknown) => {
    const plain = replaceBytes(key, v);
    if (plain === null || typeof plain !== 'object' || Array.isArray(plain)) return plain;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(plain).sort()) out[k] = (plain as Record<string, unknown>)[k];
    return out;
  });
}

function replaceBytes(_key: string, v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (ArrayBuffer.isView(v)) return base64(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
  return v;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** RFC 4648 base64 with padding (no `btoa` or `Buffer`: the package runs in browsers and Node alike). */
export function base64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += ALPHABET[(n >> 18) & 63]! + ALPHABET[(n >> 12) & 63]!;
    out += i + 1 < bytes.length ? ALPHABET[(n >> 6) & 63]! : '=';
    out += i + 2 < bytes.length ? ALPHABET[n & 63]! : '=';
  }
  return out;
}
