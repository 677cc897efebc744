// A process that keeps syncing one session of a shared FileDag until the stop file appears.
import { createNodeMirror } from '@entity-git/node-fs';
import { existsSync } from 'node:fs';
import { FileDag, fileDagSession } from './file-dag.js';

const [file, root, stop] = process.argv.slice(2) as [string, string, string];
const dag = new FileDag(file, fileDagSession('shared'));
const mirror = createNodeMirror({ dag, root });
let syncs = 0;
const errors: string[] = [];
while (!existsSync(stop)) {
  try {
    await mirror.sync('shared');
    syncs++;
  } catch (err) {
    errors.push(`${(err as { code?: string }).code}: ${(err as Error).message}`);
  }
  await new Promise((r) => setTimeout(r, 5));
}
process.stdout.write(JSON.stringify({ syncs, errors }));
