// Run by write-thread.test.ts as a process of its own: indexes a session, syncs a new turn, and
// prints the update of its result once recorded, without closing the index: the process must
// wait for that answer, then end by itself.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryDag } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { writeGolden } from '@entity-git/test-utils';
import { SearchIndex } from '../src/index.js';

const dag = new MemoryDag();
await writeGolden(dag, { sessionId: 'golden-1' });
const root = mkdtempSync(join(tmpdir(), 'eg-search-thread-'));
const mirror = createNodeMirror({ dag, root });
await mirror.sync('golden-1');
const index = new SearchIndex({ root });
await index.update('golden-1');
await dag.fillNode('golden-1', 'a6', 'Fixed all three.', null);
void index.afterSync(await mirror.sync('golden-1')).then((u) => process.stdout.write(`${JSON.stringify(u)}\n`));
