// Runs with a low open-files limit: exhausts it, syncs (must fail with a typed error and damage
// nothing), frees some descriptors, syncs again (must succeed).
import { MemoryDag } from '@entity-git/core';
import { createNodeMirror } from '@entity-git/node-fs';
import { GOLDEN_SESSION, writeGolden } from '@entity-git/test-utils';
import { closeSync, openSync } from 'node:fs';

const root = process.argv[2]!;
const dag = new MemoryDag();
await writeGolden(dag);
const mirror = createNodeMirror({ dag, root });
const fds: number[] = [];
try {
  for (;;) fds.push(openSync('/dev/null', 'r'));
} catch (err) {
  if ((err as NodeJS.ErrnoException).code !== 'EMFILE') throw err;
}
const out: Record<string, unknown> = { exhausted: fds.length };
try {
  await mirror.sync(GOLDEN_SESSION.id);
  out.first = 'ok';
} catch (err) {
  out.first = (err as { code?: string }).code;
  out.fsCode = (err as { data?: { fsCode?: string } }).data?.fsCode;
}
for (const fd of fds.splice(0, 64)) closeSync(fd);
out.second = (await mirror.sync(GOLDEN_SESSION.id)).branchesMoved;
for (const fd of fds) closeSync(fd);
process.stdout.write(JSON.stringify(out));
