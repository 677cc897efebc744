import { existsSync, readFileSync } from 'node:fs';
import {
  checkRedaction,
  EntityGitError,
  isEntityGitError,
  type RedactionOptions,
  type RedactionSetting,
} from '@entity-git/core';
import { parseMapping, type MappingInput } from './mapping/mapping-input.js';
import { resolveSchemaNames, type SchemaNamesInput } from './schema-names.js';
import { resolveValueFormats, type ValueFormatsInput } from './value-formats.js';

/**
 * The one configuration of how a database is laid out, shared by the library (spread it into
 * `openSqlite` / `openPostgres` / `createSqlStore`) and the CLI (`--config FILE`, or the file
 * beside the database, {@link defaultConfigPath}).
 */
export interface StoreConfig {
  /** Table and column names (see `SchemaNamesInput`); left out: the contract's names (`DEFAULT_SCHEMA_NAMES`). */
  names?: SchemaNamesInput;
  /** How `content` and `metadata` are stored (see `ValueFormatsInput`); left out: JSON text. */
  formats?: ValueFormatsInput;
  /** PostgreSQL: the `LISTEN` channel a writer notifies on after a commit (`entity-git watch`). */
  notifyChannel?: string;
  /**
   * An application's own tables beyond renaming (see `MappingInput` and docs/app-databases.md);
   * with it, `names` may only name the projects table and `formats` is left out.
   */
  mapping?: MappingInput;
  /**
   * What the mirror redacts (the mirror's `redaction` option, docs/design.md 'Redaction'): a
   * configuration, or `false` for none. Left out: secretlint's recommended preset.
   */
  redaction?: RedactionSetting;
}

const KEYS = ['names', 'formats', 'notifyChannel', 'mapping', 'redaction'];

/** The config file looked for when none is given: `<database file>.entity-git.json`. */
export function defaultConfigPath(databaseFile: string): string {
  return `${databaseFile}.entity-git.json`;
}

/** Checks a parsed config (names and formats as the store resolves them); `INVALID_OPTION` naming the key. */
export function parseStoreConfig(value: unknown, source = 'config'): StoreConfig {
  const fail = (message: string, cause?: unknown) =>
    new EntityGitError(
      'INVALID_OPTION',
      `[sqlite] ${source}: ${message}`,
      { source },
      cause === undefined ? undefined : { cause },
    );
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw fail('must be a JSON object');
  const config = value as Record<string, unknown>;
  for (const key of Object.keys(config)) {
    if (!KEYS.includes(key)) throw fail(`unknown key ${JSON.stringify(key)} (expected ${KEYS.join(', ')})`);
  }
  try {
    resolveSchemaNames(config.names as SchemaNamesInput | undefined);
    resolveValueFormats(config.formats as ValueFormatsInput | undefined);
    if (config.redaction !== undefined && config.redaction !== false) {
      if (typeof config.redaction !== 'object' || config.redaction === null || Array.isArray(config.redaction))
        throw fail('redaction must be false or an object ({ "preset", "patterns" })');
      checkRedaction(config.redaction as RedactionOptions);
    }
    if (config.mapping !== undefined) {
      parseMapping(config.mapping);
      const names = (config.names ?? {}) as Record<string, unknown>;
      for (const key of ['sessions', 'nodes'])
        if (key in names) throw fail(`names.${key} and mapping both describe that table: keep one (mapping)`);
      if (config.formats !== undefined) throw fail('mapping says how each value is read: leave formats out');
    }
  } catch (err) {
    if (isEntityGitError(err) && err.code === 'INVALID_OPTION' && !err.message.includes(`[sqlite] ${source}:`))
      throw fail(err.message.replace(/^\[entity-git\] \[sqlite\] /, ''), err);
    throw err;
  }
  if (
    config.notifyChannel !== undefined &&
    (typeof config.notifyChannel !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(config.notifyChannel))
  ) {
    throw fail('notifyChannel must be a plain PostgreSQL identifier (letters, digits, _; at most 63)');
  }
  return config as StoreConfig;
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
