import { execFile } from 'node:child_process';
import { EntityGitError } from '@entity-git/core';
import { fsErrorCode } from '@entity-git/git';
import type { Signature } from '../index.js';

export const NATIVE_GIT_ENGINE = 'native-git';

export const ZERO = '0'.repeat(40);
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
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
export type RunExtra = { input?: string | Buffer; env?: NodeJS.ProcessEnv };

/** Running git: {@link GitProcess.run} resolves whatever the exit code, {@link GitProcess.git} rejects a non-zero one with {@link failure}'s error. */
export class GitProcess {
  readonly #opts: NativeGitOptions;

  constructor(opts: NativeGitOptions) {
    this.#opts = opts;
  }

  /** Run git in `cwd`; resolves whatever the exit code, rejects when git could not run at all. */
  run(cwd: string, args: string[], extra: RunExtra = {}): Promise<Run> {
    return new Promise((done, fail) => {
      const child = execFile(
        this.#opts.gitPath,
        [...NEUTRAL_CONFIG, ...args],
        {
          cwd,
          env: { ...baseEnv(), ...extra.env },
          encoding: 'buffer',
          maxBuffer: 1 << 30,
          timeout: this.#opts.timeoutMs,
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

  /** Run git in `cwd` and give its standard output; a non-zero exit rejects with {@link failure}'s error. */
  async git(cwd: string, args: string[], extra: RunExtra = {}): Promise<string> {
    const r = await this.run(cwd, args, extra);
    if (r.code !== 0) throw failure(cwd, args, r);
    return r.stdout.toString('utf8');
  }
}

/** A git command that exited non-zero, as the seam's error. */
export function failure(cwd: string, args: string[], r: Run): EntityGitError {
  return new EntityGitError(
    'PROJECT_GIT_ERROR',
    `[${NATIVE_GIT_ENGINE}] git ${args[0]} failed in ${cwd} (exit ${r.code}): ${r.stderr.trim().split('\n').slice(-3).join(' / ')}`,
    { args, cwd, exit: r.code, stderr: r.stderr },
  );
}

/** A failed `update-ref` as the seam's errors: the branch moved (`REF_CONFLICT`), its lock is held (`REF_LOCKED`), or git failed. */
export function refError(root: string, args: string[], r: Run): EntityGitError {
  if (/but expected|reference already exists|unable to resolve reference|is at [0-9a-f]+ but/i.test(r.stderr)) {
    return new EntityGitError('REF_CONFLICT', `[${NATIVE_GIT_ENGINE}] the branch moved meanwhile: ${r.stderr.trim()}`, {
      args,
      stderr: r.stderr,
    });
  }
  if (/\.lock'?: File exists|Unable to create .*\.lock/i.test(r.stderr)) {
    // The lock's path, so a skip can name the file to remove when no git is running.
    const lock = /Unable to create '([^']+\.lock)'/i.exec(r.stderr)?.[1] ?? null;
    return new EntityGitError(
      'REF_LOCKED',
      `[${NATIVE_GIT_ENGINE}] the branch is locked by another git: ${r.stderr.trim()}`,
      { args, stderr: r.stderr, lock },
    );
  }
  return failure(root, args, r);
}

/** The environment that makes `commit-tree` write exactly `author` and `committer` (UTC, whole seconds). */
export function signatureEnv(author: Signature, committer: Signature): NodeJS.ProcessEnv {
  return {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_AUTHOR_DATE: `@${author.time} +0000`,
    GIT_COMMITTER_NAME: committer.name,
    GIT_COMMITTER_EMAIL: committer.email,
    GIT_COMMITTER_DATE: `@${committer.time} +0000`,
  };
}
