// A separate process syncing the golden session into a shared root, many times, as fast as it can.
import { MemoryDag } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';

const [root, rounds] = process.argv.slice(2);
const dag = new MemoryDag();
await writeGolden(dag);
const mirror = createNodeMirror({ dag, root: root! });
let commits = 0;
for (let i = 0; i < Number(rounds); i++) commits += (await mirror.sync(GOLDEN_SESSION.id)).commitsWritten;
process.stdout.write(JSON.stringify({ commits }));
