import { EntityGitError, type JsonValue } from '@entity-git/core';

/**
 * How a `content` or `metadata` column holds its value:
 * - `json`: text holding JSON (entity-git's own schema, the README's 'Schema and migrations');
 * - `text`: plain text, read as a JSON string (an application that stores a message's text as is);
 * - `jsonb`: a PostgreSQL `json`/`jsonb` column, whose value the driver hands back parsed.
 */
export type ValueFormat = 'json' | 'text' | 'jsonb';

export const VALUE_FORMATS: readonly ValueFormat[] = ['json', 'text', 'jsonb'];

/** The format of each value column, by the contract's table and column names. */
export interface ValueFormats {
  nodes: { content: ValueFormat; metadata: ValueFormat };
  sessions: { metadata: ValueFormat };
}

/** A partial {@link ValueFormats}: what is left out is `json`. */
export type ValueFormatsInput = { [T in keyof ValueFormats]?: Partial<ValueFormats[T]> };

export const DEFAULT_VALUE_FORMATS: ValueFormats = Object.freeze({
  nodes: Object.freeze({ content: 'json', metadata: 'json' }),
  sessions: Object.freeze({ metadata: 'json' }),
}) as ValueFormats;

/** Completes and freezes a partial mapping; unknown keys and formats are `INVALID_OPTION`. */
export function resolveValueFormats(input: ValueFormatsInput = {}): ValueFormats {
  if (typeof input !== 'object' || input === null) throw invalid('formats must be an object');
  const out: Record<string, Record<string, ValueFormat>> = {};
  for (const table of Object.keys(input)) {
    if (!(table in DEFAULT_VALUE_FORMATS))
      throw invalid(`formats.${table}: unknown table (expected nodes or sessions)`);
  }
  for (const table of Object.keys(DEFAULT_VALUE_FORMATS) as (keyof ValueFormats)[]) {
    const given = (input[table] ?? {}) as Record<string, unknown>;
    if (typeof given !== 'object' || given === null) throw invalid(`formats.${table} must be an object`);
    const defaults = DEFAULT_VALUE_FORMATS[table] as Record<string, ValueFormat>;
    for (const key of Object.keys(given)) {
      if (!(key in defaults))
        throw invalid(`formats.${table}.${key}: unknown column (expected ${Object.keys(defaults).join(' or ')})`);
    }
    const resolved: Record<string, ValueFormat> = {};
    for (const key of Object.keys(defaults)) {
      const value = key in given ? given[key] : defaults[key];
      if (!VALUE_FORMATS.includes(value as ValueFormat)) {
        throw invalid(
          `formats.${table}.${key} must be one of ${VALUE_FORMATS.map((f) => JSON.stringify(f)).join(', ')}, got ${JSON.stringify(value)}`,
        );
      }
      resolved[key] = value as ValueFormat;
    }
    out[table] = Object.freeze(resolved);
  }
  return Object.freeze(out) as unknown as ValueFormats;
}

/** The column value for a model value; JSON null is SQL NULL in every format. */
export function encodeValue(value: JsonValue, format: ValueFormat, where: string): string | null {
  if (value === null) return null;
  if (format !== 'text') return JSON.stringify(value);
  if (typeof value !== 'string') {
    throw new EntityGitError(
      'INVALID_OPTION',
      `[sqlite] ${where} is stored as plain text (format "text"), so it must be a string or null`,
      { where },
    );
  }
  return value;
}

/** The model value of a column value; `json` text that does not parse is a `DB_ERROR` naming the row. */
export function decodeValue(raw: unknown, format: ValueFormat, where: string): JsonValue {
  if (raw === null || raw === undefined) return null;
  // A driver that parses json columns itself (pg with a json column) hands back the value; in
  // the `jsonb` format a string is a JSON string already, never JSON text to parse.
  if (typeof raw !== 'string' || format === 'jsonb') return raw as JsonValue;
  if (format === 'text') return raw;
  try {
    return JSON.parse(raw) as JsonValue;
  } catch (err) {
    throw new EntityGitError(
      'DB_ERROR',
      `[sqlite] ${where} does not hold JSON text (if the column holds plain text, set formats.${where.startsWith('content') ? 'nodes.content' : where.includes('session') ? 'sessions.metadata' : 'nodes.metadata'} to "text")`,
      { where },
      { cause: err },
    );
  }
}

function invalid(message: string): EntityGitError<'INVALID_OPTION'> {
  return new EntityGitError('INVALID_OPTION', `[sqlite] ${message}`);
}
