import { testDagSource, testProjectStore, testStorage } from '@entity-git/test-utils';
import { openIdbDag } from '@entity-git/browser-fs';
import { dropDatabase, freshStorage, unique } from './helpers.js';

testStorage({
  name: 'browser-fs (LightningFS on IndexedDB, Chromium)',
  async create() {
    const storage = freshStorage();
    return { storage, root: '/suite', cleanup: () => storage.close() };
  },
});

testDagSource({
  name: 'IdbDag (Chromium)',
  async create() {
    const name = unique('dag');
    const dag = await openIdbDag({ name });
    return {
      source: dag,
      writer: dag,
      cleanup: async () => {
        await dag.close();
        dropDatabase(name);
      },
    };
  },
});

testProjectStore({
  name: 'IdbDag (Chromium), workdirs unchecked',
  async create() {
    const name = unique('dag');
    const dag = await openIdbDag({ name });
    return {
      store: dag,
      writer: dag,
      workdirs: ['/work/a', '/work/b', '/work/c'],
      cleanup: async () => {
        await dag.close();
        dropDatabase(name);
      },
    };
  },
});

testProjectStore({
  name: 'IdbDag (Chromium), workdirs checked in LightningFS',
  async create() {
    const storage = freshStorage();
    for (const dir of ['/projects', '/projects/a', '/projects/b', '/projects/c']) await storage.fs.mkdir(dir);
    await storage.fs.writeFile('/projects/file.txt', 'not a directory');
    const name = unique('dag');
    const dag = await openIdbDag({ name, workdirs: storage.fs });
    return {
      store: dag,
      writer: dag,
      workdirs: ['/projects/a', '/projects/b', '/projects/c'],
      missingWorkdir: '/projects/none',
      fileWorkdir: '/projects/file.txt',
      cleanup: async () => {
        await dag.close();
        dropDatabase(name);
        await storage.close();
      },
    };
  },
});
