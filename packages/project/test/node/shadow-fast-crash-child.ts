// One in-process (fast path) snapshot in its own process, killed with SIGKILL just before its
// `crashAt`-th write to the file system (every node:fs/promises call, and every synchronous
// node:fs call, that writes, removes or renames counts; one that another wrapped call makes
// inside it does not count again), so that the test sees the shadow repository as a kill at that
// step leaves it. Prints the snapshot's commit when it was not killed.
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';

const [root, workdir, countFile, crashAt] = process.argv.slice(2) as [string, string, string, string];
const require = createRequire(import.meta.url);
type Calls = Record<string, (...args: unknown[]) => unknown>;
const fsp = require('node:fs/promises') as Calls;
const fss = require('node:fs') as Calls;
const writeCount = fss.writeFileSync!.bind(fss);
let armed = false;
let writes = 0;
let inside = 0;
const writing = (name: string, args: unknown[]) =>
  !/^open(Sync)?$/.test(name) || (typeof args[1] === 'string' && /[wax+]/.test(args[1]));
const wrap = (module: Calls, names: string[]) => {
  for (const name of names) {
    const real = module[name]!;
    module[name] = function (this: unknown, ...args: unknown[]) {
      if (armed && inside === 0 && writing(name, args)) {
        writes++;
        writeCount(countFile, `${writes}\n`);
        if (writes === Number(crashAt)) process.kill(process.pid, 'SIGKILL');
      }
      inside++;
      try {
        return real.apply(this, args);
      } finally {
        inside--;
      }
    };
  }
};
wrap(fsp, ['writeFile', 'appendFile', 'rename', 'mkdir', 'unlink', 'rm', 'rmdir', 'open', 'copyFile', 'link']);
wrap(fss, [
  'writeFileSync',
  'appendFileSync',
  'renameSync',
  'mkdirSync',
  'unlinkSync',
  'rmSync',
  'rmdirSync',
  'openSync',
  'copyFileSync',
  'linkSync',
]);
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
