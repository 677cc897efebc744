import { EntityGitError, type JsonValue } from '@entity-git/core';
import * as v from 'valibot';
import { checked, deepFreeze, show, strict } from './config-check.js';

/**
 * How a `content` or `metadata` column holds its value:
 * - `json`: text holding JSON (entity-git's own schema, the README's 'Schema and migrations');
 * - `text`: plain text, read as a JSON string (an application that stores a message's text as is);
 * - `jsonb`: a PostgreSQL `json`/`jsonb` column, whose value the driver hands back parsed.
 */
export type ValueFormat = 'json' | 'text' | 'jsonb';

export const VALUE_FORMATS = ['json', 'text', 'jsonb'] as const satisfies readonly ValueFormat[];

/** The format of each value column, by the contract's table and column names. */
export interface ValueFormats {
  nodes: { content: ValueFormat; metadata: ValueFormat };
  sessions: { metadata: ValueFormat };
}

const FORMAT = v.picklist(
  VALUE_FORMATS,
  (issue) => ` must be one of ${VALUE_FORMATS.map(show).join(', ')}, got ${show(issue.input)}`,
);

/** The `formats` key: the format of each value column that is not `json`. */
export const ValueFormatsSchema = strict(
  {
    nodes: v.optional(
      strict(
        { content: v.exactOptional(FORMAT), metadata: v.exactOptional(FORMAT) },
        { unknown: 'unknown column (expected content or metadata)' },
      ),
    ),
    sessions: v.optional(
      strict({ metadata: v.exactOptional(FORMAT) }, { unknown: 'unknown column (expected metadata)' }),
    ),
  },
  { unknown: 'unknown table (expected nodes or sessions)' },
);

/** A partial {@link ValueFormats}: what is left out is `json`. */
export type ValueFormatsInput = v.InferOutput<typeof ValueFormatsSchema>;

export const DEFAULT_VALUE_FORMATS: ValueFormats = deepFreeze({
  nodes: { content: 'json', metadata: 'json' },
  sessions: { metadata: 'json' },
});

/** Completes and freezes a partial mapping; unknown keys and formats are `INVALID_OPTION`. */
export function resolveValueFormats(input: ValueFormatsInput = {}): ValueFormats {
  const given = checked(ValueFormatsSchema, input, 'formats');
  return deepFreeze({
    nodes: { ...DEFAULT_VALUE_FORMATS.nodes, ...given.nodes },
    sessions: { ...DEFAULT_VALUE_FORMATS.sessions, ...given.sessions },
  });
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
