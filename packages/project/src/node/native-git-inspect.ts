import * as fsp from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { EntityGitError } from '@entity-git/core';
import { operationsInProgress, type RepoOperation, type RepoState, type WorkdirState } from '../index.js';
import { fsErrorCode } from '@entity-git/git';
import { NATIVE_GIT_ENGINE, type GitProcess } from './native-git-process.js';

/** Finding the workdir's repository with `rev-parse` (and what in it the engine cannot handle), and `git init`. */
export function nativeInspect(proc: GitProcess) {
  return {
    inspect: (workdir: string) => inspect(proc, workdir),
    init: (workdir: string, options: { initialBranch?: string }) => init(proc, workdir, options),
  };
}

const exists = async (p: string): Promise<boolean> => (await fsp.lstat(p).catch(() => null)) !== null;

const operations = (gitdir: string): Promise<RepoOperation[]> =>
  operationsInProgress(
    (name) => exists(join(gitdir, name)),
    (name) => fsp.readFile(join(gitdir, name), 'utf8').catch(() => null),
  );

async function inspect(proc: GitProcess, workdir: string): Promise<WorkdirState> {
  const { run, failure } = proc;
  let st;
  try {
    st = await fsp.stat(workdir);
  } catch (err) {
    const code = fsErrorCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    throw new EntityGitError(
      'PROJECT_GIT_ERROR',
      `[${NATIVE_GIT_ENGINE}] cannot stat ${workdir}: ${(err as Error).message}`,
      { workdir },
      { cause: err },
    );
  }
  if (!st.isDirectory()) return { kind: 'not-a-directory' };
  const facts = [
    '--absolute-git-dir',
    '--is-bare-repository',
    '--is-inside-git-dir',
    '--is-inside-work-tree',
    '--show-object-format',
  ];
  let r = await run(workdir, ['rev-parse', ...facts, '--show-toplevel', '--show-prefix']);
  if (r.code !== 0) r = await run(workdir, ['rev-parse', ...facts]);
  if (r.code !== 0) {
    // Only git's plain "no repository here or above" means that; naming a path, it found a broken one.
    if (/not a git repository \(or any/i.test(r.stderr)) {
      // A `.git` git cannot read is a damaged repository, not an invitation to init over it.
      if (await exists(join(workdir, '.git'))) throw failure(workdir, ['rev-parse'], r);
      return { kind: 'not-a-repository', entries: (await fsp.readdir(workdir)).sort() };
    }
    throw failure(workdir, ['rev-parse'], r);
  }
  const [gitdir = '', bare, insideGitDir, insideWorkTree, objectFormat, root, prefix = ''] = r.stdout
    .toString('utf8')
    .split('\n');
  if (bare === 'true' || insideGitDir === 'true' || insideWorkTree !== 'true' || root === undefined)
    return { kind: 'bare', gitdir };
  const commonRel = (await fsp.readFile(join(gitdir, 'commondir'), 'utf8').catch(() => null))?.trim();
  const commonDir = commonRel ? resolve(gitdir, commonRel) : gitdir;
  const [sym, head, ops] = await Promise.all([
    run(root, ['symbolic-ref', '-q', 'HEAD']),
    run(root, ['rev-parse', '-q', '--verify', 'HEAD^{commit}']),
    operations(gitdir),
  ]);
  const ref = sym.code === 0 ? sym.stdout.toString('utf8').trim() : '';
  const repo: RepoState = {
    root,
    prefix: prefix.replace(/\/+$/, ''),
    gitdir,
    commonDir,
    linkedWorktree: commonDir !== gitdir,
    branch: ref.startsWith('refs/heads/') ? ref : null,
    head: head.code === 0 ? head.stdout.toString('utf8').trim() : null,
    operations: ops,
    unsupported: objectFormat === 'sha1' ? null : `a ${objectFormat} repository`,
  };
  return { kind: 'repository', repo };
}

async function init({ git }: GitProcess, workdir: string, options: { initialBranch?: string }): Promise<void> {
  await git(workdir, ['init', '-q', ...(options.initialBranch ? [`--initial-branch=${options.initialBranch}`] : [])]);
}
