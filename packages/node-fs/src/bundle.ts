// A session repository archived as a git bundle, written by native git (docs/design.md,
// 'Retention and accounting': a bundle is for git to read back, so git writes it).
import { execFile } from 'node:child_process';
import { link, mkdir, open, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { EntityGitError, uniqueSuffix } from '@entity-git/git';

export interface BundleOptions {
  /** The repository's working directory. */
  repo: string;
  /** The directory the bundle goes to (created). */
  dir: string;
  /** The bundle's base name: `<name>.bundle`, or `<name>.2.bundle`… when taken. */
  name: string;
  gitPath: string;
}

/** Keep the caller's git variables out: they could point our git at another repository. */
function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  return { ...env, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' };
}

/** Run git in `cwd`; resolves its stdout, rejects with `GIT_NOT_FOUND` or `ARCHIVE_FAILED`. */
function git(gitPath: string, cwd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      gitPath,
      ['-c', `safe.directory=${cwd}`, ...args],
      { cwd, env: gitEnv(), maxBuffer: 1 << 26, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err === null) return resolve(stdout);
        if ((err as NodeJS.ErrnoException).code === 'ENOENT')
          return reject(
            new EntityGitError('GIT_NOT_FOUND', `archiving needs native git; none at ${JSON.stringify(gitPath)}`, {
              gitPath,
            }),
          );
        reject(
          new EntityGitError('ARCHIVE_FAILED', `git ${args[0]} ${args[1] ?? ''} failed in ${cwd}: ${stderr.trim()}`, {
            repo: cwd,
          }),
        );
      },
    );
  });
}

/** `<oid> <ref>` lines as a map from ref to oid. */
const refLines = (text: string) =>
  new Map(
    text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => [l.slice(41), l.slice(0, 40)] as const),
  );

async function fsyncPath(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Write `repo` as a bundle of all its refs (branches, the meta ref, HEAD) that `git clone` reads,
 * check that git verifies it and that it lists every ref at the repository's own commit, flush it,
 * then give it its name (never over an existing file). Resolves the bundle's path, or null for a
 * repository without a ref (nothing to keep). Throws `ARCHIVE_FAILED` or `GIT_NOT_FOUND`, and
 * then leaves no file behind.
 */
export async function bundleRepository(options: BundleOptions): Promise<string | null> {
  const { repo, dir, name, gitPath } = options;
  const refs = refLines(await git(gitPath, repo, ['for-each-ref', '--format=%(objectname) %(refname)']));
  if (refs.size === 0) return null;
  await mkdir(dir, { recursive: true });
  // A bundle half-written when a prune was killed (never named: no reader took it for an archive).
  for (const left of await readdir(dir))
    if (left.startsWith(`.${name}.bundle.tmp-`)) await rm(join(dir, left), { force: true });
  const tmp = join(dir, `.${name}.bundle.tmp-${uniqueSuffix()}`);
  try {
    await git(gitPath, repo, ['bundle', 'create', tmp, '--all']);
    await git(gitPath, repo, ['bundle', 'verify', '--quiet', tmp]);
    const heads = refLines(await git(gitPath, repo, ['bundle', 'list-heads', tmp]));
    for (const [ref, oid] of refs)
      if (heads.get(ref) !== oid)
        throw new EntityGitError('ARCHIVE_FAILED', `the bundle of ${repo} lacks ${ref} at ${oid}`, { repo, ref });
    await fsyncPath(tmp);
    for (let n = 1; ; n++) {
      const target = join(dir, n === 1 ? `${name}.bundle` : `${name}.${n}.bundle`);
      // link() never replaces a file: an older archive of the same session id is kept.
      const made = await link(tmp, target).then(
        () => true,
        (err: NodeJS.ErrnoException) => {
          if (err.code === 'EEXIST') return false;
          throw err;
        },
      );
      if (!made) continue;
      await fsyncPath(dir);
      return target;
    }
  } finally {
    await rm(tmp, { force: true });
  }
}
