// A separate process packing one repository over and over until `stop` exists: the background
// packer at its most eager (every loose object is due, and every second pack merged: the pack of
// a turn whose ref has not moved yet among them), beside a process that syncs.
import { createNodePacker } from '@entity-git/node-fs';
import { existsSync, writeFileSync } from 'node:fs';

const [gitdir, stop, engine, ready] = process.argv.slice(2);
const packer = createNodePacker({
  engine: engine as 'native' | 'js',
  looseObjects: 1,
  packs: 2,
  repack: { maxPacks: 2 },
});
let packs = 0;
while (!existsSync(stop!)) {
  const report = await packer.packNow(gitdir!);
  if (report) packs++;
  if (packs === 1) writeFileSync(ready!, '');
  await new Promise((r) => setTimeout(r, 5));
}
process.stdout.write(JSON.stringify({ packs }));
