import { createIsoGitEngine } from '@entity-git/project';
import { nativeGitEngine, workdirLock } from '@entity-git/project/node';
import { nodeStorage } from '@entity-git/node-fs';
import { testProjectGit } from '../project-git-suite.js';
import { isolateGit, judge } from './judge.js';

const home = isolateGit();
const lock = workdirLock({ dir: `${home}/locks` });

testProjectGit({ name: 'native git', engine: nativeGitEngine(), judge, lock });
testProjectGit({
  name: 'isomorphic-git over node:fs',
  engine: createIsoGitEngine({ storage: nodeStorage() }),
  judge,
  lock,
});
