// Mirrors the golden session with createNodeMirror({ dag }) — no `root` unless one is given as
// argv[2] — and prints the repository path the mirror chose. The parent sets HOME.
import { MemoryDag } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';

const root = process.argv[2];
const dag = new MemoryDag();
await writeGolden(dag);
const mirror = createNodeMirror(root === undefined ? { dag } : { dag, root });
const result = await mirror.sync(GOLDEN_SESSION.id);
process.stdout.write(
  JSON.stringify({
    repoPath: mirror.repoPath(GOLDEN_SESSION.id),
    head: result.head,
    commitsWritten: result.commitsWritten,
  }),
);
