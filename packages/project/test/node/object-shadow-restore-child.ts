// One object-engine restore of turn 1 of session s1 in its own process, that SIGKILLs itself right
// after its EG_CRASH_AT-th write through the storage it is given (writeFile, rename, mkdir, unlink,
// rmdir, symlink, createExclusive, appendFile). Without EG_CRASH_AT it runs to the end and prints
// the result and the number of writes taken.
import { ObjectShadowProjectGit } from '@entity-git/project';
import type { Storage, StorageFs } from '@entity-git/git';
import { nodeCodec, nodeStorage } from '@entity-git/node-fs';

const [root, workdir] = process.argv.slice(2) as [string, string];
const crashAt = Number(process.env.EG_CRASH_AT ?? 0);
let steps = 0;

async function step<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } finally {
    steps++;
    if (steps === crashAt) process.kill(process.pid, 'SIGKILL');
  }
}

function countingStorage(base: Storage): Storage {
  const fs = base.fs;
  const counted: StorageFs = {
    ...fs,
    readFile: (p, o) => fs.readFile(p, o),
    readdir: (p) => fs.readdir(p),
    stat: (p) => fs.stat(p),
    lstat: (p) => fs.lstat(p),
    readlink: fs.readlink && ((p) => fs.readlink!(p)),
    writeFile: (p, d, o) => step(() => fs.writeFile(p, d, o)),
    unlink: (p) => step(() => fs.unlink(p)),
    mkdir: (p, o) => step(() => fs.mkdir(p, o)),
    rmdir: (p) => step(() => fs.rmdir(p)),
    rename: (a, b) => step(() => fs.rename(a, b)),
    symlink: fs.symlink && ((t, p) => step(() => fs.symlink!(t, p))),
  };
  return {
    ...base,
    fs: counted,
    createExclusive: base.createExclusive && ((p, d) => step(() => base.createExclusive!(p, d))),
    appendFile: base.appendFile && ((p, d) => step(() => base.appendFile!(p, d))),
  };
}

const projectGit = new ObjectShadowProjectGit({
  storage: countingStorage(nodeStorage()),
  codec: nodeCodec,
  root,
  lock: { timeoutMs: 2000, staleMs: 100 },
});
const r = await projectGit.restoreTurnFiles({ workdir, sessionId: 's1', turn: 1 });
process.stdout.write(JSON.stringify({ ...r, steps }));
