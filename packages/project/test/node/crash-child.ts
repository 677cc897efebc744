// One afterTurn in its own process, started when the parent says so, to be killed mid-commit.
// It takes the snapshot first (the turn begins), prints it after `ready`, and waits: the parent
// then makes the agent's edit and says go (the turn ends).
import { createNodeProjectGit } from '@entity-git/project/node';

const [workdir, lockDir] = process.argv.slice(2) as [string, string];
const pg = createNodeProjectGit({ dir: lockDir });
const snapshot = await pg.beforeTurn(workdir);
process.stdout.write(`ready ${JSON.stringify(snapshot)}\n`);
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
process.stdin.destroy();
const result = await pg.afterTurn({
  workdir,
  sessionId: 'crash',
  turn: 1,
  userMessage: 'write agent.txt',
  model: 'm',
  touchedPaths: ['agent.txt'],
  snapshot,
});
process.stdout.write(`result ${JSON.stringify(result.status)}\n`);
