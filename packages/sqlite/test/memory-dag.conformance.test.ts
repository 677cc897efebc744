import { MemoryDag } from '@entity-git/core';
import { testDagSource, testProjectStore } from '@entity-git/test-utils';
import { tempDir, workdirsIn } from './helpers/temp.js';

// The reference implementation runs the same suites as the SQL stores, so a difference between
// them is a failing test rather than a surprise in the mirror.
testDagSource({
  name: 'MemoryDag',
  create: async () => {
    const dag = new MemoryDag();
    return { source: dag, writer: dag };
  },
});

testProjectStore({
  name: 'MemoryDag',
  create: async () => {
    const dag = new MemoryDag();
    const tmp = tempDir();
    // MemoryDag sees no filesystem: it checks that a workdir is absolute, not that it exists.
    return { store: dag, writer: dag, workdirs: workdirsIn(tmp.dir).workdirs, cleanup: tmp.remove };
  },
});
