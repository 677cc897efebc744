import { nodeStorage } from '@entity-git/node-fs';
import { testMirror } from '@entity-git/test-utils';
import { rm } from 'node:fs/promises';
import { tempDir } from './helpers.js';

testMirror({
  name: 'node-fs',
  async create() {
    const root = tempDir();
    return { storage: nodeStorage(), root, cleanup: () => rm(root, { recursive: true, force: true }) };
  },
});
