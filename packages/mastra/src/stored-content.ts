import type { JsonValue } from '@entity-git/core';

export type JsonObject = { [key: string]: JsonValue };

/**
 * A message's `content` column, read as Mastra reads it (JSON text parsed, text that is not JSON
 * kept as it is), then told apart by its shape:
 * - format 2 (what Mastra writes since its message format v2, type `v2`): an object with
 *   `format: 2`, its `parts` (AI SDK v4 UI parts; null when the object has none), and its other keys;
 * - format 1 (the older rows, type `text` / `tool-call` / `tool-result`): the AI SDK's message
 *   content, a string or an array of parts;
 * - anything else JSON: kept as it is, nothing is read from it.
 */
export type StoredContent =
  | { format: 2; parts: JsonValue[] | null; fields: JsonObject }
  | { format: 1; value: string | JsonValue[] }
  | { format: 0; value: JsonValue };

export function readStoredContent(raw: unknown): StoredContent {
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      return { format: 1, value: raw };
    }
  }
  if (typeof value === 'string' || Array.isArray(value)) return { format: 1, value: value as string | JsonValue[] };
  if (isObject(value) && value.format === 2) {
    const fields: JsonObject = { ...value };
    const parts = Array.isArray(value.parts) ? value.parts : null;
    return { format: 2, parts, fields };
  }
  return { format: 0, value: (value ?? null) as JsonValue };
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A string field of a JSON object, or null. */
export function stringField(v: JsonValue | undefined, key: string): string | null {
  if (!isObject(v)) return null;
  const s = v[key];
  return typeof s === 'string' ? s : null;
}
