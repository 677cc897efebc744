import { EntityGitError } from '@entity-git/core';
import * as v from 'valibot';

// The configuration's schemas (names, formats, mapping, the config file) are valibot schemas:
// their types are inferred from them, the config file's JSON Schema is generated from them, and
// `checked` turns the first issue into the one typed error. A message either goes after the key it
// is about (it starts with ` ` or `:`: ` must be …`, `: unknown key …`) or stands alone.

/** A value as a message shows it (`nothing` for undefined). */
export const show = (value: unknown): string => JSON.stringify(value) ?? 'nothing';

/**
 * `value` checked against `schema`: its output (a fresh copy holding only the schema's keys), or
 * `INVALID_OPTION` naming the key (`mapping.nodes.seq.from must be 0 or 1 …`, `data.key`). `where`
 * is the key `value` sits at; `source` (a config file) prefixes the message and is `data.source`.
 */
export function checked<S extends v.GenericSchema>(
  schema: S,
  value: unknown,
  where: string,
  source?: string,
): v.InferOutput<S> {
  const result = v.safeParse(schema, value, { abortEarly: true, message: fallback });
  if (result.success) return result.output;
  const issue = result.issues[0];
  let key = where;
  for (const item of issue.path ?? []) {
    if (typeof item.key === 'number') key += `[${item.key}]`;
    else key += key === '' ? String(item.key) : `.${String(item.key)}`;
  }
  const after = /^[ :]/.test(issue.message);
  const text = after ? (key === '' ? issue.message.replace(/^:? /, '') : `${key}${issue.message}`) : issue.message;
  const data: Record<string, unknown> = { key: key.split('[', 1)[0] };
  if (source !== undefined) data.source = source;
  return fail(source === undefined ? text : `${source}: ${text}`, data);
}

/** The message of a schema that gives none: after the key, as every other. */
const fallback = (issue: v.BaseIssue<unknown>) => ` must be ${issue.expected}, got ${show(issue.input)}`;

function fail(message: string, data: Record<string, unknown>): never {
  throw new EntityGitError('INVALID_OPTION', `[sqlite] ${message}`, data);
}

/** No NUL and no lone surrogate: neither SQLite's nor PostgreSQL's identifiers hold them. */
const NAME = /^[^\u0000\uD800-\uDFFF]+$/u;

/** A table, column or key name: a non-empty string; `what` names it in the message. */
export function nameSchema(what = 'a non-empty name') {
  const message = (issue: v.BaseIssue<unknown>) => ` must be ${what}, got ${show(issue.input)}`;
  return v.pipe(v.string(message), v.regex(NAME, message));
}

export const Name = nameSchema();

/** A dotted key path (`"column.key.key"`): a name with no empty key. */
export const KeyPath = v.pipe(
  Name,
  v.check(
    (path) => !path.split('.').includes(''),
    (issue) => `: ${show(issue.input)} has an empty key (write "column.key.key")`,
  ),
);

/**
 * An object with exactly these keys: an unknown key is refused (a typo fails at load instead of
 * reading the wrong column later), a required one missing is named. `unknown` says what an
 * unknown key is (after its path), or is the whole message for the key it is given; `what` what
 * the value must be.
 */
export function strict<const E extends v.ObjectEntries>(
  entries: E,
  options: { unknown?: string | ((key: unknown) => string); what?: string } = {},
) {
  const { unknown = `unknown key (expected ${Object.keys(entries).join(', ')})` } = options;
  const wrong = (issue: v.BaseIssue<unknown>) => ` must be ${options.what ?? 'an object'}, got ${show(issue.input)}`;
  const object = v.strictObject(entries, (issue) => {
    if (issue.expected === 'never') return typeof unknown === 'string' ? `: ${unknown}` : unknown(issue.input);
    if (issue.expected?.startsWith('"')) return ' is required';
    return wrong(issue);
  });
  // valibot's objects take an array (an object to `typeof`): `[]` would pass for one whose keys
  // are all optional, where the JSON Schema (`type: object`) refuses it. The JSON Schema is the
  // object's (the pipe's output).
  return v.pipe(v.custom<Record<string, unknown>>(isRecord, wrong), object);
}

/** Every {@link shaped} value's shapes by name: the JSON Schema's `$defs`. */
export const SHAPES: Record<string, v.GenericSchema> = {};

/**
 * A value of one of several shapes, checked against the shape `pick` finds it meant (so the
 * message names what is wrong in it, not that it matches no shape); anything else, and the JSON
 * Schema (`$defs[name]`), are all of them (`anyOf`).
 */
export function shaped<const T extends readonly v.GenericSchema[]>(
  name: string,
  options: T,
  pick: (input: unknown) => v.GenericSchema | undefined,
  what: string,
) {
  const any = v.union(options, (issue) => ` must be ${what}, got ${show(issue.input)}`);
  SHAPES[name] = any;
  return v.lazy((input) => (input === undefined ? any : ((pick(input) as typeof any | undefined) ?? any)));
}

/** A plain object (not an array, not null): what {@link shaped}'s `pick` looks at. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Freezes a value and everything in it (the resolved names and mappings are shared, never changed). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
