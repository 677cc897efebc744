import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { toJsonSchema } from '@valibot/to-json-schema';
import { Ajv } from 'ajv';
import type * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { SHAPES } from '../src/config-check.js';
import { KNOWN_SCHEMAS, parseStoreConfig, StoreConfigSchema } from '../src/index.js';

const at = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const SCHEMA_FILE = at('../config.schema.json');

/**
 * The config file's JSON Schema, generated from the schemas the config is checked with. What a
 * `check` adds (a key path's empty keys, a SELECT that is one statement, names and mapping
 * describing the same table) is checked at load only: JSON Schema has no word for it.
 */
function generated(): string {
  const schema = toJsonSchema(StoreConfigSchema, {
    target: 'draft-07',
    // An object's schema is a pipe: a check that it is no array, then the object (config-check.ts).
    typeMode: 'output',
    ignoreActions: ['check'],
    definitions: SHAPES,
    // A name's pattern has the `u` flag, so that a surrogate pair is one character: JSON Schema
    // patterns are read so (ajv compiles them with `u`).
    overrideAction: ({ valibotAction, jsonSchema }) =>
      valibotAction.type === 'regex' &&
      (valibotAction as v.RegexAction<string, v.ErrorMessage<v.RegexIssue<string>> | undefined>).requirement.flags ===
        'u'
        ? jsonSchema
        : undefined,
  });
  const titled = {
    $schema: schema.$schema,
    title: 'entity-git database configuration (<db>.entity-git.json, --config FILE)',
    ...schema,
  };
  return `${JSON.stringify(titled, null, 2)}\n`;
}

/** The ```json and ```jsonc blocks of a page that are config files (every top-level key a config key). */
function configBlocks(page: string): unknown[] {
  const keys = new Set(['$schema', 'names', 'formats', 'notifyChannel', 'mapping', 'redaction']);
  const blocks = [...page.matchAll(/```jsonc?\n([\s\S]*?)\n```/g)].map((m) =>
    JSON.parse(m[1]!.replace(/\s*\/\/.*$/gm, '')),
  );
  return blocks.filter((b) => Object.keys(b).length > 0 && Object.keys(b).every((k) => keys.has(k)));
}

describe('config.schema.json', () => {
  it('is the JSON Schema generated from the config schemas, byte for byte', () => {
    // Regenerate after changing a schema: ENTITY_GIT_WRITE_CONFIG_SCHEMA=1 and this test.
    if (process.env.ENTITY_GIT_WRITE_CONFIG_SCHEMA === '1') writeFileSync(SCHEMA_FILE, generated());
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(generated());
  });

  it('accepts every documented config and every known schema as a config, as the loader does', () => {
    const validate = new Ajv({ strict: true, allErrors: true }).compile(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')));
    const cli = readFileSync(at('../../cli/README.md'), 'utf8');
    const documented = [
      ...configBlocks(readFileSync(at('../README.md'), 'utf8')),
      ...configBlocks(readFileSync(at('../docs/app-databases.md'), 'utf8')),
      ...[...cli.matchAll(/cat > \S+\.entity-git\.json <<'JSON'\n([\s\S]*?)\nJSON/g)].map((m) => JSON.parse(m[1]!)),
    ];
    // The README's, the reference and the tools example of the mapping key, the markers query's, the six known
    // schemas written out, the CLI's.
    expect(documented).toHaveLength(11);
    const known = KNOWN_SCHEMAS.map((k) => ({
      $schema: './node_modules/@entity-git/sqlite/config.schema.json',
      mapping: k.mapping,
    }));
    for (const config of [...documented, ...known]) {
      expect(validate(config) ? [] : validate.errors, JSON.stringify(config).slice(0, 80)).toEqual([]);
      expect(() => parseStoreConfig(config)).not.toThrow();
    }
  });

  it('names the key in every message the loader gives', () => {
    const cases: [unknown, string][] = [
      [{ redaction: { patterns: [{ name: 7, pattern: 'x' }] } }, 'c.json: redaction.patterns[0].name must be 1 to 40'],
      [{ redaction: { patterns: [{ name: 'n', pattern: '(' }] } }, 'c.json: redaction.patterns[0] has a pattern, "("'],
      [{ redaction: 'on' }, 'c.json: redaction must be false or an object'],
      [
        { mapping: { sessions: { query: 'select 1' }, nodes: { query: 7 } } },
        'c.json: mapping.nodes.query must be a SELECT',
      ],
      [{ names: { nodes: { caller: 5 } } }, 'c.json: names.nodes.caller must be a non-empty name or null, got 5'],
      [{ names: { nodes: null } }, 'c.json: names.nodes must be an object, got null'],
      [{ names: { nodes: [] } }, 'c.json: names.nodes must be an object, got []'],
      [{ $schema: 1 }, 'c.json: $schema must be string, got 1'],
      ['x', 'c.json: must be a JSON object, got "x"'],
    ];
    for (const [config, message] of cases)
      expect(() => parseStoreConfig(config, 'c.json')).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringContaining(`[sqlite] ${message}`) }),
      );
  });

  it('refuses what the loader refuses, at the same key', () => {
    const validate = new Ajv({ strict: true }).compile(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')));
    const mapping = KNOWN_SCHEMAS[0]!.mapping;
    const bad: [unknown, string][] = [
      [{ name: {} }, ''],
      [{ names: { nodes: { parent: 'x' } } }, '/names/nodes'],
      [{ names: { sessions: { title: '' } } }, '/names/sessions/title'],
      [{ formats: { nodes: { content: 'xml' } } }, '/formats/nodes/content'],
      [{ notifyChannel: 'drop table;' }, '/notifyChannel'],
      [{ redaction: true }, '/redaction'],
      [{ mapping: { ...mapping, nodes: { ...mapping.nodes, seq: { column: 'seq', from: 2 } } } }, '/mapping'],
      [{ mapping: { sessions: mapping.sessions } }, '/mapping'],
      [[], ''],
      // Arrays where an object whose keys are all optional goes (valibot's objects take arrays).
      [{ names: [] }, '/names'],
      [{ names: { nodes: [] } }, '/names/nodes'],
      [{ redaction: [] }, '/redaction'],
    ];
    for (const [config, path] of bad) {
      expect(validate(config), JSON.stringify(config).slice(0, 80)).toBe(false);
      expect(validate.errors?.some((e) => e.instancePath.startsWith(path))).toBe(true);
      expect(() => parseStoreConfig(config)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    }
  });
});
