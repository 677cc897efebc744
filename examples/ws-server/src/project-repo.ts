import { isOid } from '@entity-git/git';
// The project workdir's git repository, through the git binary: reuse or create it when a project
// is created, and read its log for the project page. Read-only apart from `git init`, which
// writes only `.git/` and never touches the user's files.
import { execFile } from 'node:child_process';
import type { ProjectCommit, RepoSetup } from './protocol.js';

const GIT_ENV = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' };

/** Never rejects: a missing git binary, a timeout or a failing command is `ok: false`. */
function git(args: string[], cwd: string): Promise<{ ok: boolean; stdout: string }> {
  return new Promise((resolve) => {
    execFile('git', args, { cwd, env: GIT_ENV, timeout: 15_000, maxBuffer: 8 * 1024 * 1024 }, (err, stdout) => {
      resolve({ ok: err === null, stdout: String(stdout) });
    });
  });
}

/** Whether `workdir` is inside a git work tree. */
export async function isRepo(workdir: string): Promise<boolean> {
  const r = await git(['rev-parse', '--is-inside-work-tree'], workdir);
  return r.ok && r.stdout.trim() === 'true';
}

/** Reuse the repository the workdir is in, or `git init` one; `unavailable` when git is missing or fails. */
export async function ensureRepo(workdir: string): Promise<RepoSetup> {
  if (await isRepo(workdir)) return 'reused';
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
