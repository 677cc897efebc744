// A prune in a process of its own, for the crash test: argv root, archive dir, git binary.
import { MemoryDag } from '@entity-git/core';
import { pruneSessions } from '@entity-git/node-fs';
import { writeGolden } from '@entity-git/test-utils';

const [root, archive, gitPath, ...kept] = process.argv.slice(2);
const dag = new MemoryDag();
for (const id of kept) await writeGolden(dag, { sessionId: id });
await pruneSessions({ root: root!, dag, archive: archive!, gitPath: gitPath! });
console.log('not killed');
