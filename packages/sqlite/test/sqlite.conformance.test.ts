import { join } from 'node:path';
import { testDagSource, testProjectStore } from '@entity-git/test-utils';
import { openSqlite } from '../src/index.js';
import { rowEditsOf } from './helpers/app-edits.js';
import { OTHER_NAMES } from './helpers/other-names.js';
import { tempDir, workdirsIn } from './helpers/temp.js';

for (const [label, names] of [
  ['sqlite', undefined],
  ['sqlite, custom table and column names', OTHER_NAMES],
] as const) {
  testDagSource({
    name: label,
    create: async () => {
      const tmp = tempDir();
      const store = await openSqlite({ file: join(tmp.dir, 'dag.sqlite'), names, migrate: true });
      return {
        source: store.dag,
        writer: store.writer,
        rowEdits: rowEditsOf(store),
        cleanup: async () => {
          await store.close();
          tmp.remove();
        },
      };
    },
  });

  testProjectStore({
    name: label,
    create: async () => {
      const tmp = tempDir();
      const store = await openSqlite({ file: join(tmp.dir, 'dag.sqlite'), names, migrate: true });
      return {
        store: store.projects,
        writer: store.writer,
        ...workdirsIn(tmp.dir),
        cleanup: async () => {
          await store.close();
          tmp.remove();
        },
      };
    },
  });
}
