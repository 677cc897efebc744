// One agent session in its own process: `rounds` turns into a shared project, each writing one file
// of its own, then waiting at a barrier until every session has written, so that all the sessions'
// afterTurn calls race for the project at once.
import { existsSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { createIsoGitEngine } from '@entity-git/project';
import { createNodeProjectGit, nativeGitEngine } from '@entity-git/project/node';
import { nodeStorage } from '@entity-git/node-fs';

const [workdir, sessionId, rounds, barrier, sessions, engineName, lockDir] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
  string,
];
const engine = engineName === 'iso' ? createIsoGitEngine({ storage: nodeStorage() }) : nativeGitEngine();
const pg = createNodeProjectGit({ engine, dir: lockDir, initialBranch: 'main' });
const results = [];
for (let turn = 1; turn <= Number(rounds); turn++) {
  const snapshot = await pg.beforeTurn(workdir);
  const file = `${sessionId}/turn-${turn}.txt`;
  await fsp.mkdir(join(workdir, sessionId), { recursive: true });
  await fsp.writeFile(join(workdir, file), `${sessionId} wrote this in turn ${turn}\n`);
  await fsp.writeFile(join(barrier, `${sessionId}-${turn}`), '');
  while (!sessions.split(',').every((s) => existsSync(join(barrier, `${s}-${turn}`))))
    await new Promise((r) => setTimeout(r, 5));
  results.push(
    await pg.afterTurn({
      workdir,
      sessionId,
      turn,
      userMessage: `turn ${turn} of ${sessionId}`,
      model: engineName,
      touchedPaths: [file],
      snapshot,
    }),
  );
}
process.stdout.write(JSON.stringify(results));
