import type { JsonValue } from '@entity-git/core';
import type { ResolvedSource, ResolvedSpec } from './resolved-mapping.js';

type Row = Record<string, unknown>;

/**
 * A column's value as JSON: text, numbers and booleans as they are (a number JSON cannot hold, an
 * integer past 2^53, as its decimal text), bytes as base64 text, a time as ISO text, a value the
 * driver parsed (PostgreSQL json) as it is; SQL NULL is null.
 */
export function jsonOfColumn(raw: unknown): JsonValue {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === 'string' || typeof raw === 'boolean') return raw;
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : String(raw);
  if (typeof raw === 'bigint') return Number.isSafeInteger(Number(raw)) ? Number(raw) : raw.toString();
  if (raw instanceof Uint8Array) return Buffer.from(raw).toString('base64');
  if (raw instanceof Date) return raw.toISOString();
  return raw as JsonValue;
}

/**
 * The values of one row as a mapping reads them. A JSON column's text is parsed once; text that
 * does not parse is kept as the text (nothing is lost), and a path into it finds nothing.
 */
export class RowValues {
  private readonly parsed = new Map<string, JsonValue>();

  constructor(
    readonly row: Row,
    private readonly jsonColumns: ReadonlySet<string>,
  ) {}

  /** The column's value, parsed when it is a JSON column. */
  column(name: string): JsonValue {
    if (this.parsed.has(name)) return this.parsed.get(name)!;
    const raw = this.row[name];
    let value = jsonOfColumn(raw);
    if (typeof raw === 'string' && this.jsonColumns.has(name)) {
      try {
        value = JSON.parse(raw) as JsonValue;
      } catch {
        // Kept as text: a row the application could not parse either still mirrors, as written.
      }
    }
    this.parsed.set(name, value);
    return value;
  }

  /** The value a spec names; undefined when a path leads nowhere. */
  read(spec: ResolvedSpec): JsonValue | undefined {
    let v: JsonValue | undefined = this.column(spec.column);
    for (const key of spec.path) v = child(v, key);
    return v;
  }

  /** The first non-null value of a source, and the spec that gave it. */
  first(source: ResolvedSource): { value: JsonValue; spec: ResolvedSpec } | null {
    for (const spec of source) {
      const value = this.read(spec);
      if (value !== undefined && value !== null) return { value, spec };
    }
    return null;
  }
}

/** The value at a key of an object, or an index of an array (`"0"`). */
export function child(v: JsonValue | undefined, key: string): JsonValue | undefined {
  if (v === null || typeof v !== 'object') return undefined;
  if (Array.isArray(v)) return /^(0|[1-9]\d*)$/.test(key) ? v[Number(key)] : undefined;
  return Object.hasOwn(v, key) ? v[key] : undefined;
}

/** A copy of `value` without the key at the end of `path` (the objects on the way copied, nothing else). */
export function without(value: JsonValue, path: readonly string[]): JsonValue {
  if (path.length === 0 || value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const [key, ...rest] = path as [string, ...string[]];
  if (!Object.hasOwn(value, key)) return value;
  const copy = { ...value };
  if (rest.length === 0) delete copy[key];
  else copy[key] = without(value[key]!, rest);
  return copy;
}

/** Text for a text field (a title, an id): a string as it is, a number as its digits, anything else null. */
export function textOf(v: JsonValue | undefined): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  return null;
}

/** A count: a finite number, or the digits of one (PostgreSQL hands bigint back as text). */
export function countOf(v: JsonValue | undefined): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  return null;
}
