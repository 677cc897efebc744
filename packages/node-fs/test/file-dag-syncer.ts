// A process that keeps syncing one session of a shared FileDag until the stop file appears;
// after its first sync it creates `<stop>.ready-<pid>`, so a test can start its turns once every
// syncer runs (a process starts slowly on a loaded machine).
import { createNodeMirror } from '@entity-git/node-fs';
import { existsSync, writeFileSync } from 'node:fs';
import { FileDag, fileDagSession } from './file-dag.js';

const [file, root, stop] = process.argv.slice(2) as [string, string, string];
const dag = new FileDag(file, fileDagSession('shared'));
const mirror = createNodeMirror({ dag, root });
let syncs = 0;
const errors: string[] = [];
while (!existsSync(stop)) {
  try {
    await mirror.sync('shared');
    if (syncs++ === 0) writeFileSync(`${stop}.ready-${process.pid}`, '');
  } catch (err) {
    // The frames go with the error: a rare race under load is diagnosed from the one failing run.
    const frames = ((err as Error).stack ?? '')
      .split('\n')
      .slice(1, 8)
      .map((l) => l.trim())
      .join(' | ');
    errors.push(`${(err as { code?: string }).code}: ${(err as Error).message} at ${frames}`);
  }
  await new Promise((r) => setTimeout(r, 5));
}
process.stdout.write(JSON.stringify({ syncs, errors }));
