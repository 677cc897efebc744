// One restore of turn 1 of session s1 in its own process, with git run through the wrapper given
// as gitPath (the test's, which SIGKILLs this process after its EG_CRASH_AT-th git call).
import { ShadowProjectGit } from '@entity-git/project/node';

const [root, workdir, gitPath] = process.argv.slice(2) as [string, string, string];
const projectGit = new ShadowProjectGit({ root, gitPath });
const r = await projectGit.restoreTurnFiles({ workdir, sessionId: 's1', turn: 1 });
process.stdout.write(JSON.stringify(r));
