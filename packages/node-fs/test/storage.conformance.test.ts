import { nodeStorage } from '@entity-git/node-fs';
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
