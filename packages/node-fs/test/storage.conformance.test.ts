import { nodeStorage } from '@entity-git/node-fs';
import { describe, expect, it } from 'vitest';
import { testStorage } from '@entity-git/test-utils';
import { rm } from 'node:fs/promises';
import { tempDir } from './helpers.js';

testStorage({
  name: 'node-fs',
  async create() {
    const root = tempDir();
    return { storage: nodeStorage(), root, cleanup: () => rm(root, { recursive: true, force: true }) };
  },
});

testStorage({
  name: 'node-fs with fsync',
  async create() {
    const root = tempDir();
    return { storage: nodeStorage({ fsync: true }), root, cleanup: () => rm(root, { recursive: true, force: true }) };
  },
});

describe('the node codec', () => {
  it('hashes an object from its parts (no frame copied) and inflates to a size hint', () => {
    const codec = nodeStorage().codec!;
    expect(codec.sha1Parts).toBeTypeOf('function');
    const hello = new TextEncoder().encode('hello\n');
    expect(codec.sha1Parts!([new TextEncoder().encode('blob 6\0'), hello])).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
    const z = codec.deflate(hello);
    expect(Buffer.from(codec.inflate(z, 6)).toString()).toBe('hello\n');
  });
});
