// One session in its own process: `rounds` turns into a project shared with other processes, each
// writing one file of its own through a shell, then waiting at a barrier until every session has
// written, so that all the sessions' after-snapshots race for the project's shadow repository at
// once; then a restore of its first turn. Prints the restore's result.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { ShadowProjectGit } from '@entity-git/project/node';

const [root, workdir, sessionId, rounds, barrier, sessions] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const projectGit = new ShadowProjectGit({ root });
const meet = async (step: string) => {
  await fsp.writeFile(join(barrier, `${sessionId}-${step}`), '');
  while (!sessions.split(',').every((s) => existsSync(join(barrier, `${s}-${step}`))))
    await new Promise((r) => setTimeout(r, 5));
};
for (let turn = 1; turn <= Number(rounds); turn++) {
  const snapshot = await projectGit.beforeTurn(workdir);
  execFileSync(
    'sh',
    ['-c', `mkdir -p ${sessionId} && printf '%s turn %s\\n' ${sessionId} ${turn} > ${sessionId}/turn-${turn}.txt`],
    {
      cwd: workdir,
    },
  );
  await meet(String(turn));
  await projectGit.afterTurn({
    workdir,
    sessionId,
    turn,
    userMessage: `turn ${turn} of ${sessionId}`,
    model: 'm',
    touchedPaths: [],
    snapshot,
  });
}
await meet('restore');
const restored = await projectGit.restoreTurnFiles({ workdir, sessionId, turn: 1 });
process.stdout.write(JSON.stringify(restored));
