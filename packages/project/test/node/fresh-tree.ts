// What a snapshot of the whole work tree must hold, said by native git: the tree `git add -A`
// gives with a fresh index in a repository of its own, files over `cap` bytes taken out.
import { execFile } from 'node:child_process';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { judge } from './judge.js';

const sh = promisify(execFile);

export async function freshTree(workdir: string, cap = Number.POSITIVE_INFINITY): Promise<string> {
  const tmp = await judge.tempDir();
  await sh('git', ['init', '-q', '--bare', join(tmp, 'git')]);
  const env = { ...process.env, GIT_DIR: join(tmp, 'git'), GIT_WORK_TREE: workdir, GIT_INDEX_FILE: join(tmp, 'index') };
  const run = async (...args: string[]) => (await sh('git', args, { cwd: workdir, env, maxBuffer: 1 << 26 })).stdout;
  await run('add', '-A');
  for (const path of (await run('ls-files', '-z')).split('\0').filter(Boolean)) {
    const info = await fsp.lstat(join(workdir, path));
    if (info.isFile() && info.size > cap) await run('rm', '-q', '--cached', '--', path);
  }
  return (await run('write-tree')).trim();
}
