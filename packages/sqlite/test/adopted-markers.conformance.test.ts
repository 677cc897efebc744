// The change markers of databases entity-git keeps no triggers in, computed from their rows: the
// conformance part of the markers (every kind of write changes them; `changeMarkers` gives what
// `changeMarker` gives) on each shape of database, in SQLite and PostgreSQL, each written by its
// application's own SQL and read by a store opened read-only.
import { testChangeMarkers } from '@entity-git/test-utils';
import { DEFAULT_SCHEMA_NAMES, resolveSchemaNames, type SqlEngine } from '../src/index.js';
import { openAppDatabase } from './helpers/app-edits.js';
import { type AppShape, flatDagShape, messagesShape, ownLayoutShape, postsShape } from './helpers/app-shapes.js';
import { OTHER_NAMES } from './helpers/other-names.js';

const SHAPES: AppShape[] = [
  ownLayoutShape("entity-git's layout made by the application, default names", DEFAULT_SCHEMA_NAMES, false),
  ownLayoutShape("entity-git's layout made by the application, other names", resolveSchemaNames(OTHER_NAMES), true),
  postsShape,
  messagesShape,
  flatDagShape,
];

for (const engine of ['sqlite', 'postgres'] as SqlEngine[]) {
  for (const shape of SHAPES) {
    testChangeMarkers({
      name: `${engine}, ${shape.label}`,
      create: async () => {
        const db = await openAppDatabase(shape, engine);
        return { source: db.store.dag, edits: db.edits, cleanup: db.cleanup };
      },
    });
  }
}
