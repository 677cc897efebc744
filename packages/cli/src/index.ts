export { main, version, COMMAND_NAME } from './main.js';
export type { CliIo } from './io.js';
export { EXIT_OK, EXIT_DIFFERS, EXIT_USAGE, EXIT_INTERNAL, EXIT_WARNINGS, type ExitCode } from './exit-codes.js';
export { defaultDb } from './context.js';
export { renderBar } from './progress.js';
export type {
  SyncJson,
  VerifyJson,
  LogJson,
  CommitJson,
  BranchesJson,
  BranchJson,
  ShowJson,
  ProjectsJson,
  ProjectOneJson,
  ProjectJson,
  DifferenceJson,
  ErrorJson,
} from './json-shapes.js';
export type {
  ImportJson,
  ImportSessionJson,
  ImportWarningJson,
  ImportFailureJson,
  ImportSummaryJson,
} from './commands/import-json.js';
export type { StatsJson } from './commands/stats.js';
export type { PruneJson, DuJson } from './commands/retention.js';
export type { ScanJson } from './commands/redact.js';
export type { RestoreJson } from './commands/remote.js';
export type { ProjectLogJson, ProjectCommitJson } from './commands/projects.js';
export type { ProjectsImportJson } from './commands/projects-import.js';
export type { ProjectRevertJson } from './commands/projects-revert.js';
