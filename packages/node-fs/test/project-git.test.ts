import { createObjectEngine } from '@entity-git/core';
import { nativeGitEngine, nodeStorage, workdirLock } from '@entity-git/node-fs';
import { testProjectGit } from '@entity-git/test-utils';
import { isolateGit, judge } from './project/judge.js';

const home = isolateGit();
const lock = workdirLock({ dir: `${home}/locks` });

testProjectGit({ name: 'native git', engine: nativeGitEngine(), judge, lock });
testProjectGit({
  name: 'isomorphic-git over node:fs',
  engine: createObjectEngine({ storage: nodeStorage() }),
  judge,
  lock,
});
