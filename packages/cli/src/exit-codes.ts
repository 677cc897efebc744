/**
 * The exit codes of `entity-git`, part of its contract with scripts (README "Exit codes").
 * 1 is reserved for "the command ran and found something wrong" so a script can tell a damaged
 * mirror from a typo in its own command line (2) or a broken disk or database (3).
 */
export const EXIT_OK = 0;
/** `verify` found a difference, `sync` left a session failed, or `projects revert` refused (a conflict, uncommitted work, a lock). */
export const EXIT_DIFFERS = 1;
/** Bad arguments or input: unknown command or option, unknown session/branch/commit/project, missing database file. */
export const EXIT_USAGE = 2;
/** Storage, database or internal error. */
export const EXIT_INTERNAL = 3;
/** `import` imported every session, but skipped damaged lines (each reported): worse than 0, not a failure. */
export const EXIT_WARNINGS = 4;

export type ExitCode =
  | typeof EXIT_OK
  | typeof EXIT_DIFFERS
  | typeof EXIT_USAGE
  | typeof EXIT_INTERNAL
  | typeof EXIT_WARNINGS;
