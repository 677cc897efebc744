import { existsSync, readFileSync } from 'node:fs';
import { EntityGitError } from '@entity-git/core';
import * as v from 'valibot';
import { checked, isRecord, shaped, show, strict } from './config-check.js';
import { MappingSchema, type MappingInput } from './mapping/mapping-input.js';
import { SchemaNamesSchema } from './schema-names.js';
import { ValueFormatsSchema } from './value-formats.js';

const REDACTION_NAME = /^[a-z0-9_-]{1,40}$/;
const patternName = (issue: v.BaseIssue<unknown>) => ` must be 1 to 40 of a-z, 0-9, _ and -, got ${show(issue.input)}`;

/** What the mirror redacts: a configuration (the mirror's `redaction` option), or `false` for none. */
const RedactionOff = v.literal(false);
const RedactionOptionsSchema = strict({
  preset: v.optional(v.picklist(['recommend', 'none'], (i) => ` must be "recommend" or "none", got ${show(i.input)}`)),
  patterns: v.optional(
    v.array(
      v.pipe(
        strict({
          name: v.pipe(v.string(patternName), v.regex(REDACTION_NAME, patternName)),
          pattern: v.string(" must be a regular expression's source"),
          flags: v.optional(v.pipe(v.string(), v.regex(/^[ims]*$/, ' must be any of i, m, s'))),
        }),
        v.check(
          (p) => compiles(p.pattern, p.flags),
          (i) => ` has a pattern, ${show((i.input as { pattern: string }).pattern)}, that is no regular expression`,
        ),
      ),
      ' must be an array of { "name", "pattern", "flags" }',
    ),
  ),
});
const RedactionSchema = shaped(
  'Redaction',
  [RedactionOff, RedactionOptionsSchema],
  (r) => (r === false ? RedactionOff : isRecord(r) ? RedactionOptionsSchema : undefined),
  'false or an object ({ "preset", "patterns" })',
);

const KEYS = ['$schema', 'names', 'formats', 'notifyChannel', 'mapping', 'redaction'];

/**
 * The configuration file's schema: how a database is laid out, shared by the library (spread it
 * into `openSqlite` / `openPostgres` / `createSqlStore`) and the CLI (`--config FILE`, or the file
 * beside the database, {@link defaultConfigPath}). Its JSON Schema is `config.schema.json`.
 */
export const StoreConfigSchema = v.pipe(
  strict(
    {
      $schema: v.optional(v.pipe(v.string(), v.description('The JSON Schema of this file, for editors.'))),
      names: v.optional(
        v.pipe(SchemaNamesSchema, v.description("Table and column names; left out: the contract's names.")),
      ),
      formats: v.optional(
        v.pipe(ValueFormatsSchema, v.description('How `content` and `metadata` are stored; left out: JSON text.')),
      ),
      notifyChannel: v.optional(
        v.pipe(
          v.string(),
          v.regex(
            /^[A-Za-z_][A-Za-z0-9_]{0,62}$/,
            ' must be a plain PostgreSQL identifier (letters, digits, _; at most 63)',
          ),
          v.description('PostgreSQL: the `LISTEN` channel a writer notifies on after a commit (`entity-git watch`).'),
        ),
      ),
      mapping: v.optional(
        v.pipe(
          MappingSchema,
          v.description(
            "An application's own tables beyond renaming (docs/app-databases.md); with it, `names` may only name the projects table and `formats` is left out.",
          ),
        ),
      ),
      redaction: v.optional(
        v.pipe(
          RedactionSchema,
          v.description(
            "What the mirror redacts: a configuration, or false for none. Left out: secretlint's recommended preset.",
          ),
        ),
      ),
    },
    { unknown: (key) => `unknown key ${show(key)} (expected ${KEYS.join(', ')})`, what: 'a JSON object' },
  ),
  v.check(
    (c) => c.mapping === undefined || (c.names?.sessions === undefined && c.names?.nodes === undefined),
    (i) => {
      const names = (i.input as { names: Record<string, unknown> }).names;
      return `names.${'sessions' in names ? 'sessions' : 'nodes'} and mapping both describe that table: keep one (mapping)`;
    },
  ),
  v.check(
    (c) => c.mapping === undefined || c.formats === undefined,
    'mapping says how each value is read: leave formats out',
  ),
);

/** The one configuration of how a database is laid out (see {@link StoreConfigSchema}). */
export type StoreConfig = Omit<v.InferOutput<typeof StoreConfigSchema>, '$schema' | 'mapping'> & {
  mapping?: MappingInput;
};

/** The config file looked for when none is given: `<database file>.entity-git.json`. */
export function defaultConfigPath(databaseFile: string): string {
  return `${databaseFile}.entity-git.json`;
}

/** Checks a parsed config; `INVALID_OPTION` naming the key. `$schema` (for editors) is left out of the result. */
export function parseStoreConfig(value: unknown, source = 'config'): StoreConfig {
  if (Array.isArray(value))
    throw new EntityGitError('INVALID_OPTION', `[sqlite] ${source}: must be a JSON object`, { source });
  const { $schema: _, ...config } = checked(StoreConfigSchema, value, '', source);
  return config;
}

function compiles(pattern: string, flags = ''): boolean {
  try {
    new RegExp(pattern, `gu${flags}`);
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads and checks a config file. `required: false` (the default location) answers `{}` when
 * the file does not exist; a file that exists and is wrong is always an error.
 */
export function loadStoreConfig(file: string, options: { required?: boolean } = {}): StoreConfig {
  if (!existsSync(file)) {
    if (options.required === false) return {};
    throw new EntityGitError('INVALID_OPTION', `[sqlite] no config file at ${file}`, { source: file });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new EntityGitError(
      'INVALID_OPTION',
      `[sqlite] ${file}: not JSON: ${(err as Error).message}`,
      { source: file },
      { cause: err },
    );
  }
  return parseStoreConfig(parsed, file);
}
