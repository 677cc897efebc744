import { execFile } from 'node:child_process';
import { EntityGitError } from '@entity-git/core';
import { fsErrorCode } from '@entity-git/git';

export const NATIVE_GIT_ENGINE = 'native-git';

export const ZERO = '0'.repeat(40);
export const NO_HOOKS = process.platform === 'win32' ? 'NUL' : '/dev/null';

export interface NativeGitEngineOptions {
  /** The git binary. Default `git` (found on PATH). */
  gitPath?: string;
  /** How long one git command may run. Default 120 s. */
  timeoutMs?: number;
  /** How long to wait for someone else's `index.lock` when setting the agent's paths in the index. Default 10 s. */
  indexLockTimeoutMs?: number;
}

/** The options with their defaults filled in. */
export type NativeGitOptions = Readonly<Required<NativeGitEngineOptions>>;

/** Variables a hook or a wrapping git process may have set, which would point our git elsewhere. */
export const KEPT_GIT_VARIABLES = new Set([
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_CONFIG_NOSYSTEM',
  'GIT_EXEC_PATH',
  'GIT_CEILING_DIRECTORIES',
]);

/**
 * What every project git call is given first: the user's repository may carry a hostile config
 * (a cloned project, a link an agent followed into `.git`). No hook runs — not even
 * reference-transaction, which update-ref would run and which could veto a commit (see
 * docs/project-git.md, "Hooks") — no fsmonitor command, and no pager; command-line `-c` wins over
 * every config file.
 */
export const NEUTRAL_CONFIG: readonly string[] = [
  '--no-pager',
  '-c',
  `core.hooksPath=${NO_HOOKS}`,
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.pager=cat',
];

export function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_') || KEPT_GIT_VARIABLES.has(k)) env[k] = v;
  return {
    ...env,
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    // `git status` would otherwise refresh and rewrite the index: an index write on a skip.
    GIT_OPTIONAL_LOCKS: '0',
    // No pager and no editor of the user's config or environment ever starts.
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: 'true',
    GIT_SEQUENCE_EDITOR: 'true',
    // Paths are file names, never globs (a file named `*.ts` is that one file).
    GIT_LITERAL_PATHSPECS: '1',
    // A commit is built on what the objects are, not on what refs/replace/ says they are.
    GIT_NO_REPLACE_OBJECTS: '1',
  };
}

export interface Run {
  stdout: Buffer;
  stderr: string;
  code: number;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** What a git command is given besides its arguments: its standard input, more environment. */
type RunExtra = { input?: string | Buffer; env?: NodeJS.ProcessEnv };

/** Running git: `run` resolves whatever the exit code, `git` rejects a non-zero one with {@link failure}'s error. */
export function gitProcess(opts: NativeGitOptions) {
  const run = (cwd: string, args: string[], extra: RunExtra = {}): Promise<Run> => runGit(opts, cwd, args, extra);
  async function git(cwd: string, args: string[], extra: RunExtra = {}): Promise<string> {
    const r = await run(cwd, args, extra);
    if (r.code !== 0) throw failure(cwd, args, r);
    return r.stdout.toString('utf8');
  }
  return { run, git, failure, refError };
}

/** Run git in `cwd`; resolves whatever the exit code, rejects when git could not run at all. */
function runGit(opts: NativeGitOptions, cwd: string, args: string[], extra: RunExtra): Promise<Run> {
  return new Promise((done, fail) => {
    const child = execFile(
      opts.gitPath,
      [...NEUTRAL_CONFIG, ...args],
      {
        cwd,
        env: { ...baseEnv(), ...extra.env },
        encoding: 'buffer',
        maxBuffer: 1 << 30,
        timeout: opts.timeoutMs,
        windowsHide: true,
      },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : -1
          : 0;
        if (err && code === -1) {
          fail(
            new EntityGitError(
              fsErrorCode(err) === 'ENOENT' ? 'GIT_NOT_FOUND' : 'PROJECT_GIT_ERROR',
              `[${NATIVE_GIT_ENGINE}] git ${args[0]} in ${cwd}: ${err.message}`,
              { args, cwd },
              { cause: err },
            ),
          );
          return;
        }
        done({ stdout: stdout as Buffer, stderr: (stderr as Buffer).toString('utf8'), code });
      },
    );
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(extra.input ?? '');
  });
}

function failure(cwd: string, args: string[], r: Run): EntityGitError {
  return new EntityGitError(
    'PROJECT_GIT_ERROR',
    `[${NATIVE_GIT_ENGINE}] git ${args[0]} failed in ${cwd} (exit ${r.code}): ${r.stderr.trim().split('\n').slice(-3).join(' / ')}`,
    { args, cwd, exit: r.code, stderr: r.stderr },
  );
}

/** A failed `update-ref` as the seam's errors: the branch moved (`REF_CONFLICT`), its lock is held (`REF_LOCKED`), or git failed. */
function refError(root: string, args: string[], r: Run): EntityGitError {
  if (/but expected|reference already exists|unable to resolve reference|is at [0-9a-f]+ but/i.test(r.stderr)) {
    return new EntityGitError('REF_CONFLICT', `[${NATIVE_GIT_ENGINE}] the branch moved meanwhile: ${r.stderr.trim()}`, {
      args,
      stderr: r.stderr,
    });
  }
  if (/\.lock'?: File exists|Unable to create .*\.lock/i.test(r.stderr)) {
    return new EntityGitError(
      'REF_LOCKED',
      `[${NATIVE_GIT_ENGINE}] the branch is locked by another git: ${r.stderr.trim()}`,
      { args, stderr: r.stderr },
    );
  }
  return failure(root, args, r);
}

export type GitProcess = ReturnType<typeof gitProcess>;
