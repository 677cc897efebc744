import { createProjectGit, type ProjectGitEngine, type ProjectGitOptions, type ProjectLock } from '@entity-git/project';
import type { AfterTurnInput, AfterTurnResult, ProjectGit, ProjectSnapshot } from '@entity-git/core';
import { expect } from 'vitest';

/**
 * What the suite needs of the platform to set up real repositories and judge them with native git
 * (the suite itself has no file system or process access, so it runs wherever an adapter can
 * supply these).
 */
export interface ProjectGitJudge {
  /** A fresh, empty directory, as an absolute real path (no symlink in it). */
  tempDir(): Promise<string>;
  /**
   * Run native git in `cwd` as the user would — identity `User <user@example.com>`, no signing,
   * fixed dates (`GIT_AUTHOR_DATE`/`GIT_COMMITTER_DATE` = 1700000000) — and resolve its stdout;
   * reject on a non-zero exit.
   */
  git(cwd: string, ...args: string[]): Promise<string>;
  /** Like {@link git}, resolving the exit code instead of rejecting. */
  gitCode(cwd: string, ...args: string[]): Promise<number>;
  /** Write a file, creating its parents. */
  write(path: string, data: string): Promise<void>;
  read(path: string): Promise<string | null>;
  /** Remove a file or a directory tree. */
  remove(path: string): Promise<void>;
  exists(path: string): Promise<boolean>;
  chmod(path: string, mode: number): Promise<void>;
  symlink(target: string, path: string): Promise<void>;
  /**
   * A digest of everything under `dir`, `.git` included: each path with its type, mode, size,
   * content hash and mtime. Equal digests: nothing was written, renamed or touched.
   */
  fingerprint(dir: string): Promise<string>;
}

export interface ProjectGitSuiteOptions {
  /** Shown in the suite's title. */
  name: string;
  engine: ProjectGitEngine;
  judge: ProjectGitJudge;
  /** The cross-process lock the platform provides (default: core's in-process one). */
  lock?: ProjectLock;
}

export const SESSION_COMMIT = 'c0ffee0000000000000000000000000000000001';
export const NOW = 1_700_000_100_000;
export const COMMITTER = 'agent (claude-sonnet-4.7 via OpenProgram)';
export const EMAIL = 'agent@openprogram.invalid';
export const LONG_MESSAGE =
  '  Fix the\tparser:\n\n  it drops   the last token when a line ends in a comment, and more words after sixty';

/** The suite's helpers over one engine and judge: repositories made, turns' input, git asked, nothing-touched checks. */
export function suiteContext(options: ProjectGitSuiteOptions) {
  const { engine, judge: j } = options;

  const projectGit = (extra: Partial<ProjectGitOptions> = {}): ProjectGit =>
    createProjectGit({
      engine,
      ...(options.lock ? { lock: options.lock } : {}),
      initialBranch: 'main',
      now: () => NOW,
      ...extra,
    });

  /** A repository on `main` with `files` committed by the user (fixed dates: the same ids every run). */
  async function repo(
    files: Record<string, string> = { 'README.md': '# project\n', 'src/main.ts': 'export const x = 1;\n' },
  ): Promise<string> {
    const dir = await j.tempDir();
    await j.git(dir, 'init', '-q', '-b', 'main');
    for (const [p, c] of Object.entries(files)) await j.write(`${dir}/${p}`, c);
    await j.git(dir, 'add', '-A');
    await j.git(dir, 'commit', '-q', '-m', 'initial');
    return dir;
  }

  const input = (
    workdir: string,
    touchedPaths: string[],
    snapshot: ProjectSnapshot | null,
    extra: Partial<AfterTurnInput> = {},
  ): AfterTurnInput => ({
    workdir,
    sessionId: 'sess-1',
    turn: 7,
    userMessage: LONG_MESSAGE,
    model: 'claude-sonnet-4.7',
    sessionCommit: SESSION_COMMIT,
    touchedPaths,
    snapshot,
    ...extra,
  });

  const names = async (dir: string, rev = 'HEAD') =>
    (await j.git(dir, 'show', '--name-only', '--format=', rev)).trim().split('\n').filter(Boolean).sort();
  const count = async (dir: string, rev = 'HEAD') => Number((await j.git(dir, 'rev-list', '--count', rev)).trim());
  const porcelain = async (dir: string) => j.git(dir, 'status', '--porcelain', '--untracked-files=all');

  /** Runs `fn` (which calls afterTurn, or another read) and checks that nothing at all changed under `dir`. */
  async function untouched<T = AfterTurnResult>(dir: string, fn: () => Promise<T>): Promise<T> {
    const before = await j.fingerprint(dir);
    const r = await fn();
    expect(await j.fingerprint(dir)).toBe(before);
    return r;
  }

  const expectSkip = (r: AfterTurnResult, reason: string) => {
    expect(r.status).toBe('skipped');
    expect(r).toMatchObject({ reason });
    if (r.status === 'skipped' && r.reason !== 'nothing-to-commit') expect(r.warning.length).toBeGreaterThan(10);
  };

  return { engine, j, projectGit, repo, input, names, count, porcelain, untouched, expectSkip };
}

export type SuiteContext = ReturnType<typeof suiteContext>;
