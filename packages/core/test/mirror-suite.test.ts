import { memoryStorage } from '@entity-git/git';
import { testMirror } from '../../test-utils/src/mirror-suite.js';

// Core runs a mirror on its own: the in-memory storage, and the portable codec (pure-JS SHA-1 and deflate).
testMirror({
  name: 'core memoryStorage',
  async create() {
    return { storage: memoryStorage(), root: '/suite' };
  },
});
