import { testMirror } from '@entity-git/test-utils';
import { freshStorage } from './helpers.js';

testMirror({
  name: 'browser-fs (LightningFS on IndexedDB, Chromium)',
  async create() {
    const storage = freshStorage();
    return { storage, root: '/suite', cleanup: () => storage.close() };
  },
});
