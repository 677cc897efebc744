import { afterAll } from 'vitest';
import { testDagSource, testProjectStore } from '@entity-git/test-utils';
import { reusablePostgres } from './helpers/reusable-postgres.js';
import { tempDir, workdirsIn } from './helpers/temp.js';
import { rowEditsOf } from './helpers/app-edits.js';
import { OTHER_NAMES } from './helpers/other-names.js';

for (const [label, names] of [
  ['postgres', undefined],
  ['postgres, custom table and column names', OTHER_NAMES],
] as const) {
  const dagDb = reusablePostgres(names);
  const projectDb = reusablePostgres(names);
  afterAll(async () => {
    await dagDb.close();
    await projectDb.close();
  });

  testDagSource({
    name: label,
    create: async () => {
      const store = await dagDb.empty();
      return { source: store.dag, writer: store.writer, rowEdits: rowEditsOf(store) };
    },
  });

  testProjectStore({
    name: label,
    create: async () => {
      const store = await projectDb.empty();
      const tmp = tempDir();
      return { store: store.projects, writer: store.writer, ...workdirsIn(tmp.dir), cleanup: tmp.remove };
    },
  });
}
