import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { KNOWN_SCHEMAS, parseStoreConfig, type TableMappingInput } from '../../src/index.js';

const PAGE = readFileSync(fileURLToPath(new URL('../../docs/app-databases.md', import.meta.url)), 'utf8');

describe('docs/app-databases.md', () => {
  it('writes out exactly the configuration each known schema amounts to', () => {
    for (const known of KNOWN_SCHEMAS) {
      const m = new RegExp(`<!-- known-schema: ${known.name} -->\\n\`\`\`json\\n([\\s\\S]*?)\\n\`\`\``).exec(PAGE);
      expect(m, known.name).not.toBeNull();
      const config = parseStoreConfig(JSON.parse(m![1]!), `${known.name} example`);
      expect(config.mapping).toEqual(known.mapping);
    }
  });

  it('its reference example of the mapping key is a valid configuration', () => {
    const m = /## The `mapping` key\n\n```jsonc\n([\s\S]*?)\n```/.exec(PAGE);
    const json = m![1]!.replace(/\s*\/\/.*$/gm, '');
    const mapping = parseStoreConfig(JSON.parse(json), 'reference example').mapping as TableMappingInput | undefined;
    expect(mapping?.nodes.seq).toEqual({ rank: 'timestamp' });
  });
});
