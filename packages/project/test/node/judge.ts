import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll } from 'vitest';
import type { ProjectGitJudge } from '../project-git-suite.js';

/**
 * Isolate every git this process runs — the judge's and the native engine's — from the machine's
 * configuration: a private global config, no system config.
 */
export function isolateGit(): string {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'eg-gitconfig-')));
  const global = join(home, 'gitconfig');
  writeFileSync(
    global,
    '[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n[commit]\n\tgpgsign = false\n',
  );
  process.env.GIT_CONFIG_GLOBAL = global;
  process.env.GIT_CONFIG_NOSYSTEM = '1';
  return home;
}

const USER = {
  GIT_AUTHOR_NAME: 'User',
  GIT_AUTHOR_EMAIL: 'user@example.com',
  GIT_AUTHOR_DATE: '@1700000000 +0000',
  GIT_COMMITTER_NAME: 'User',
  GIT_COMMITTER_EMAIL: 'user@example.com',
  GIT_COMMITTER_DATE: '@1700000000 +0000',
  GIT_EDITOR: 'true',
  GIT_TERMINAL_PROMPT: '0',
};

function runGit(cwd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('git', args, { cwd, env: { ...process.env, ...USER }, maxBuffer: 1 << 28 }, (err, stdout, stderr) => {
      const code = err
        ? typeof (err as { code?: unknown }).code === 'number'
          ? (err as { code: number }).code
          : -1
        : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

export async function fingerprint(root: string): Promise<string> {
  const lines: string[] = [];
  const visit = async (path: string, rel: string): Promise<void> => {
    const st = await fsp.lstat(path, { bigint: true });
    const head = `${rel}\t${st.mode.toString(8)}\t${st.size}\t${st.mtimeNs}`;
    if (st.isDirectory()) {
      lines.push(`${head}\tdir`);
      for (const name of (await fsp.readdir(path)).sort())
        await visit(join(path, name), rel === '' ? name : `${rel}/${name}`);
    } else if (st.isSymbolicLink()) lines.push(`${head}\tlink ${await fsp.readlink(path)}`);
    else
      lines.push(
        `${head}\t${createHash('sha1')
          .update(await fsp.readFile(path))
          .digest('hex')}`,
      );
  };
  await visit(root, '');
  return lines.join('\n');
}

const made: string[] = [];
// A test file's directories are removed when it ends: left behind, a run of this package's tests
// left ~200 MB in /tmp. One a killed child's git still writes into is left (a warning), never a failure.
afterAll(async () => {
  for (const dir of made.splice(0))
    await fsp
      .rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 })
      .catch((err) => console.warn(`left ${dir}: ${String(err)}`));
});

export const judge: ProjectGitJudge = {
  async tempDir() {
    const dir = realpathSync(await fsp.mkdtemp(join(tmpdir(), 'eg-project-')));
    made.push(dir);
    return dir;
  },
  async git(cwd, ...args) {
    const r = await runGit(cwd, args);
    if (r.code !== 0) throw new Error(`git ${args.join(' ')} (in ${cwd}) exited ${r.code}: ${r.stderr}`);
    return r.stdout;
  },
  gitCode: async (cwd, ...args) => (await runGit(cwd, args)).code,
  async write(path, data) {
    await fsp.mkdir(dirname(path), { recursive: true });
    await fsp.writeFile(path, data);
  },
  read: (path) => fsp.readFile(path, 'utf8').catch(() => null),
  remove: (path) => fsp.rm(path, { recursive: true, force: true }),
  exists: async (path) => (await fsp.lstat(path).catch(() => null)) !== null,
  chmod: (path, mode) => fsp.chmod(path, mode),
  async symlink(target, path) {
    await fsp.mkdir(dirname(path), { recursive: true });
    await fsp.symlink(target, path);
  },
  fingerprint,
};

/** The tree native git writes for the workdir: `git add -A` into a fresh index of a throwaway repository, then `write-tree`. */
export async function nativeTree(workdir: string): Promise<string> {
  const gitDir = join(await judge.tempDir(), 'judge.git');
  await judge.git(workdir, 'init', '-q', '--bare', gitDir);
  const git = (...args: string[]) =>
    judge.git(workdir, `--git-dir=${gitDir}`, `--work-tree=${workdir}`, '-c', 'core.bare=false', ...args);
  await git('add', '-A');
  return (await git('write-tree')).trim();
}

/** A git that logs each call's arguments, one line each, before running the real one. */
export async function loggingGit(): Promise<{ gitPath: string; calls: () => Promise<string[]> }> {
  const dir = await judge.tempDir();
  const log = join(dir, 'calls.log');
  const gitPath = join(dir, 'git');
  await fsp.writeFile(gitPath, `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec git "$@"\n`, { mode: 0o755 });
  let seen = 0;
  return {
    gitPath,
    // The calls since the previous look.
    async calls() {
      const all = (await fsp.readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean);
      const fresh = all.slice(seen);
      seen = all.length;
      return fresh;
    },
  };
}
