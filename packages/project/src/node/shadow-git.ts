// Native git for a shadow repository: its own git directory and index, the user's workdir as the
// work tree, and nothing of the workdir's able to run code or change what git does. A hostile
// workdir is in the threat model (docs/design.md §7), so every call neutralises hooks, fsmonitor,
// pager, editor, system and global config, and attributes that would rewrite bytes (filters, eol).
import { execFile } from 'node:child_process';
import { EntityGitError } from '@entity-git/core';
import { fsErrorCode } from '@entity-git/git';

const NULL_DEVICE = process.platform === 'win32' ? 'NUL' : '/dev/null';

/** Config given on every call, above anything in the shadow repository's own config. */
const NEUTRAL_CONFIG = [
  `core.hooksPath=${NULL_DEVICE}`,
  // git's default personal ignore file (~/.config/git/ignore) is read even with the global config
  // off: the snapshot follows the project's rules alone, as the in-process fast path does.
  `core.excludesFile=${NULL_DEVICE}`,
  'core.fsmonitor=false',
  'core.pager=cat',
  'core.editor=true',
  'core.autocrlf=false',
  'core.safecrlf=false',
  'core.quotePath=false',
  'core.untrackedCache=true',
  'core.sparseCheckout=false',
  'advice.addEmbeddedRepo=false',
  'gc.auto=0',
  'maintenance.auto=false',
  'protocol.allow=never',
].flatMap((c) => ['-c', c]);

export interface ShadowGitPlace {
  /** The shadow repository's git directory. */
  gitDir: string;
  /** The user's workdir: the work tree. */
  workTree: string;
  /** The git binary. */
  gitPath: string;
  /** How long one git command may run. */
  timeoutMs: number;
}

export interface ShadowRun {
  stdout: Buffer;
  stderr: string;
  code: number;
}

/** The environment of every call: nothing inherited that starts with GIT_, then ours. */
function shadowEnv(place: ShadowGitPlace): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  return {
    ...env,
    LC_ALL: 'C',
    GIT_DIR: place.gitDir,
    GIT_WORK_TREE: place.workTree,
    GIT_INDEX_FILE: `${place.gitDir}/index`,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: NULL_DEVICE,
    GIT_ATTR_NOSYSTEM: '1',
    GIT_PAGER: 'cat',
    GIT_EDITOR: 'true',
    GIT_SEQUENCE_EDITOR: 'true',
    GIT_TERMINAL_PROMPT: '0',
    GIT_LITERAL_PATHSPECS: '1',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_AUTHOR_NAME: 'entity-git',
    GIT_AUTHOR_EMAIL: 'shadow@entity-git.invalid',
    GIT_COMMITTER_NAME: 'entity-git',
    GIT_COMMITTER_EMAIL: 'shadow@entity-git.invalid',
  };
}

/** Runs git in a shadow repository: `run` resolves whatever the exit code, `git` rejects a non-zero one. */
export class ShadowGit {
  readonly #place: ShadowGitPlace;

  constructor(place: ShadowGitPlace) {
    this.#place = place;
  }

  get place(): ShadowGitPlace {
    return this.#place;
  }

  run(args: readonly string[], input?: string | Buffer): Promise<ShadowRun> {
    const place = this.#place;
    return new Promise((done, fail) => {
      const child = execFile(
        place.gitPath,
        [...NEUTRAL_CONFIG, ...args],
        {
          cwd: place.workTree,
          env: shadowEnv(place),
          encoding: 'buffer',
          maxBuffer: 1 << 30,
          timeout: place.timeoutMs,
          windowsHide: true,
        },
        (err, stdout, stderr) => {
          const code = err
            ? typeof (err as { code?: unknown }).code === 'number'
              ? (err as { code: number }).code
              : -1
            : 0;
          if (err && code === -1) {
            const missing = fsErrorCode(err) === 'ENOENT';
            fail(
              new EntityGitError(
                missing ? 'GIT_NOT_FOUND' : 'PROJECT_GIT_ERROR',
                `[shadow] git ${args[0]}: ${err.message}`,
                {
                  args: [...args],
                },
              ),
            );
            return;
          }
          done({ stdout: stdout as Buffer, stderr: (stderr as Buffer).toString('utf8'), code });
        },
      );
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(input ?? '');
    });
  }

  async git(args: readonly string[], input?: string | Buffer): Promise<string> {
    const r = await this.run(args, input);
    if (r.code !== 0) throw this.failure(args, r);
    return r.stdout.toString('utf8');
  }

  failure(args: readonly string[], r: ShadowRun): EntityGitError {
    return new EntityGitError(
      'PROJECT_GIT_ERROR',
      `[shadow] git ${args[0]} failed (exit ${r.code}): ${r.stderr.trim().split('\n').slice(-3).join(' / ')}`,
      { args: [...args], exit: r.code, stderr: r.stderr },
    );
  }
}
