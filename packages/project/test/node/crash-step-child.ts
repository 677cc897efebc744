// One project auto-commit (afterTurn) in its own process, on the engine named, that SIGKILLs
// itself right after its k-th step when EG_CRASH_AT=k is set:
// - isomorphic-git engine: a step is one write the engine makes through the storage it is given
//   (writeFile, rename, mkdir, unlink, rmdir, symlink, createExclusive, appendFile) — the
//   engine's documented `storage` option, wrapped here;
// - native git engine: a step is one git process it spawns, through the engine's documented
//   `gitPath` option pointing at a wrapper (EG_GIT_WRAPPER) that runs git, counts, and at the
//   k-th SIGKILLs this process once git has finished.
// Without EG_CRASH_AT it runs to the end and prints the result and the number of steps taken.
import { readFileSync } from 'node:fs';
import { createIsoGitEngine } from '@entity-git/project';
import type { ProjectSnapshot } from '@entity-git/core';
import type { Storage, StorageFs } from '@entity-git/git';
import { createNodeProjectGit, nativeGitEngine } from '@entity-git/project/node';
import { nodeCodec, nodeStorage } from '@entity-git/node-fs';

const [engineName, workdir, lockDir, snapshotFile] = process.argv.slice(2) as [string, string, string, string];
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

const engine =
  engineName === 'iso'
    ? // A short wait for a lock file someone else holds: a lock left by the killed run is reported, not waited for 10 s.
      createIsoGitEngine({ storage: countingStorage(nodeStorage()), codec: nodeCodec, lockTimeoutMs: 300 })
    : nativeGitEngine({ gitPath: process.env.EG_GIT_WRAPPER!, indexLockTimeoutMs: 300 });
// A fixed clock: the agent commit's id, so which fan-out directories its objects need (each one a
// step of the isomorphic-git engine when it is new), is the same in every run.
const pg = createNodeProjectGit({ engine, dir: lockDir, now: () => 1779500000000 });
const snapshot = JSON.parse(readFileSync(snapshotFile, 'utf8')) as ProjectSnapshot;
try {
  const result = await pg.afterTurn({
    workdir,
    sessionId: 'crash',
    turn: 1,
    userMessage: 'the agent edits three files',
    model: 'm',
    touchedPaths: ['agent.txt', 'notes.txt', 'old.txt'],
    snapshot,
  });
  const native = engineName === 'iso' ? steps : Number(readFileSync(process.env.EG_STEPS_FILE!, 'utf8').trim());
  process.stdout.write(
    JSON.stringify({
      status: result.status,
      reason: 'reason' in result ? result.reason : null,
      steps: native,
      recovered: result.recovered ?? null,
    }),
  );
} catch (err) {
  process.stdout.write(
    JSON.stringify({ error: (err as { code?: string }).code ?? String(err), message: (err as Error).message }),
  );
}
