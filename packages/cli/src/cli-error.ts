import type { EntityGitError, ErrorCode } from '@entity-git/core';
import { untagged } from './json-shapes.js';
import { EXIT_DIFFERS, EXIT_INTERNAL, EXIT_USAGE, type ExitCode } from './exit-codes.js';

/** An error the CLI reports as one line on stderr with its exit code. */
export class CliError extends Error {
  override readonly name = 'CliError';
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode = EXIT_USAGE) {
    super(message);
    this.exitCode = exitCode;
  }
}

// By name and code rather than instanceof: main.ts loads no part of the library until a
// command runs (fast --help), and a second copy of core in node_modules still matches.
function isEntityGitError(err: unknown): err is EntityGitError {
  return err instanceof Error && err.name === 'EntityGitError' && typeof (err as { code?: unknown }).code === 'string';
}

// Codes that mean "what you asked for does not exist or is malformed": the user can fix the
// command line. Everything else (storage, database, corrupt repositories) is exit 3.
const USAGE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'INVALID_ID',
  'INVALID_OPTION',
  'INVALID_PROJECT',
  'INVALID_WORKDIR',
  'DUPLICATE_PROJECT',
  'SESSION_NOT_FOUND',
  'NODE_NOT_FOUND',
  'PROJECT_NOT_FOUND',
  'COMMIT_NOT_FOUND',
  'BRANCH_NOT_FOUND',
  // a bad search query; export --turn past the branch's tip
  'INVALID_ARGUMENT',
  'TRANSCRIPT_INVALID',
  'NOT_AGENT_COMMIT',
  'AGENT_COMMIT_NOT_FOUND',
  'PRUNE_REFUSED',
]);

// The undo ran and found it cannot be done safely now (a conflict, uncommitted work, a lock):
// "something is wrong", as for verify, not a typo in the command line.
const REFUSED_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['REVERT_CONFLICT', 'REVERT_REFUSED']);

/** The exit code for any thrown value. */
export function exitCodeOf(err: unknown): ExitCode {
  if (err instanceof CliError) return err.exitCode;
  if (isEntityGitError(err) && REFUSED_CODES.has(err.code)) return EXIT_DIFFERS;
  if (isEntityGitError(err)) return USAGE_CODES.has(err.code) ? EXIT_USAGE : EXIT_INTERNAL;
  return EXIT_INTERNAL;
}

// A damaged repository is what `sync` repairs; say so where the damage is met.
const REPAIRABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'OBJECT_NOT_FOUND',
  'OBJECT_CORRUPT',
  'REF_CORRUPT',
  'REPO_CORRUPT',
]);

/** One line of text for any thrown value, without the library's `[entity-git] [sqlite]` tags. */
export function messageOf(err: unknown): string {
  const raw = err instanceof Error ? err.message : String(err);
  const text = untagged(raw);
  if (!isEntityGitError(err) || exitCodeOf(err) !== EXIT_INTERNAL) return text;
  return `${text} (${err.code}${REPAIRABLE.has(err.code) ? '; entity-git sync repairs the repository' : ''})`;
}
