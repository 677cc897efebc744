import { isOid } from '@entity-git/git';
// The project workdir's git repository, through the git binary: reuse or create it when a project
// is created, and read its log for the project page. Read-only apart from `git init`, which
// writes only `.git/` and never touches the user's files.
import { execFile } from 'node:child_process';
import type { ProjectCommit, RepoSetup } from './protocol.js';

/** The user's repository may carry a hostile config: no hook, fsmonitor, pager or editor of it runs. */
const GIT_ENV = {
  ...process.env,
  GIT_TERMINAL_PROMPT: '0',
  GIT_OPTIONAL_LOCKS: '0',
  GIT_PAGER: 'cat',
  GIT_EDITOR: 'true',
  LC_ALL: 'C',
};
const SAFE = [
  '--no-pager',
  '-c',
  'core.fsmonitor=false',
  '-c',
  `core.hooksPath=${process.platform === 'win32' ? 'NUL' : '/dev/null'}`,
];

/** Never rejects: a missing git binary, a timeout or a failing command is `ok: false`. */
function git(args: string[], cwd: string): Promise<{ ok: boolean; stdout: string }> {
  return new Promise((resolve) => {
    const opts = { cwd, env: GIT_ENV, timeout: 15_000, maxBuffer: 8 * 1024 * 1024 };
    execFile('git', [...SAFE, ...args], opts, (err, stdout) => {
      resolve({ ok: err === null, stdout: String(stdout) });
    });
  });
}

/** Whether `workdir` is inside a git work tree. */
export async function isRepo(workdir: string): Promise<boolean> {
  const r = await git(['rev-parse', '--is-inside-work-tree'], workdir);
  return r.ok && r.stdout.trim() === 'true';
}

/** Reuse the repository the workdir is in, or `git init` one when `init`; `unavailable` when git is missing, fails, or was not to init. */
export async function ensureRepo(workdir: string, init: boolean): Promise<RepoSetup> {
  if (await isRepo(workdir)) return 'reused';
  if (!init) return 'unavailable';
  const r = await git(['init', '--quiet'], workdir);
  return r.ok ? 'created' : 'unavailable';
}

/** The newest `limit` commits of HEAD (or of `rev`); empty for an unborn branch. */
export async function readLog(workdir: string, limit: number, rev?: string): Promise<ProjectCommit[]> {
  if (rev !== undefined && !isOid(rev)) return [];
  const r = await git(
    ['log', `-n${limit}`, '--format=%H%x1f%an%x1f%cn%x1f%ct%x1f%s%x1e', ...(rev === undefined ? [] : [rev, '--'])],
    workdir,
  );
  if (!r.ok) return [];
  return r.stdout
    .split('\x1e')
    .map((rec) => rec.trim())
    .filter((rec) => rec !== '')
    .map((rec) => {
      const [sha = '', author = '', committer = '', time = '0', subject = ''] = rec.split('\x1f');
      return { sha, author, committer, time: Number(time), subject, agent: committer.startsWith('agent (') };
    });
}
