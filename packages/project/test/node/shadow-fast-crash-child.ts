// One in-process (fast path) snapshot in its own process, killed with SIGKILL just before its
// `crashAt`-th write to the file system (every node:fs/promises call that writes, removes or
// renames counts), so that the test sees the shadow repository as a kill at that step leaves it.
// Prints the snapshot's commit when it was not killed.
import { writeFileSync } from 'node:fs';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';

const [root, workdir, countFile, crashAt] = process.argv.slice(2) as [string, string, string, string];
const require = createRequire(import.meta.url);
const fsp = require('node:fs/promises') as Record<string, (...args: unknown[]) => unknown>;
let armed = false;
let writes = 0;
const writing = (name: string, args: unknown[]) =>
  name !== 'open' || (typeof args[1] === 'string' && /[wax+]/.test(args[1]));
for (const name of [
  'writeFile',
  'appendFile',
  'rename',
  'mkdir',
  'unlink',
  'rm',
  'rmdir',
  'open',
  'copyFile',
  'link',
]) {
  const real = fsp[name]!;
  fsp[name] = function (this: unknown, ...args: unknown[]) {
    if (armed && writing(name, args)) {
      writes++;
      writeFileSync(countFile, `${writes}\n`);
      if (writes === Number(crashAt)) process.kill(process.pid, 'SIGKILL');
    }
    return real.apply(this, args);
  };
}
// Every module's named imports of node:fs/promises see the wrappers.
syncBuiltinESMExports();

const { closeShadowWatchers, ShadowRepository } = await import('@entity-git/project/node');
const repo = await ShadowRepository.open({ root, workdir });
await repo.snapshot({ kind: 'before' }); // a walk: this process's watcher starts
await writeFile(join(workdir, 'a.txt'), 'a1\n');
await rm(join(workdir, 'b.txt'));
await mkdir(join(workdir, 'sub'));
await writeFile(join(workdir, 'sub', 'c.txt'), 'c1\n');
await chmod(join(workdir, 'd.sh'), 0o755);
armed = true;
const after = await repo.snapshot({ kind: 'after', sessionId: 's', turn: 1 });
armed = false;
closeShadowWatchers();
process.stdout.write(JSON.stringify({ commit: after.commit, writes }));
