// @entity-git/project: the project auto-commit (docs/project-git.md). Browser-safe: the engine
// here works on any StorageFs; Node's native git engine and workdir lock are `@entity-git/project/node`.
// Its types as the mirror service sees them (ProjectGit, AfterTurnInput, …) are core's: import
// them from @entity-git/core.
export type {
  ProjectGitEngine,
  RepoState,
  RepoOperation,
  WorkdirState,
  ChangedPath,
  FileState,
  Signature,
  CommitRequest,
  CommitDone,
  InFlightCommit,
  IndexUpdate,
  CommitRecord,
  UndoRequest,
  UndoDone,
} from './project-git-engine.js';
export { applicableUpdates, sameEntry } from './project-git-engine.js';
export type { ProjectLock, ProjectJournal, PendingEdit } from './project-coordination.js';
export {
  createProjectGit,
  memoryJournal,
  projectCommitMessage,
  UNCOMMITTED_CHANGES_WARNING,
  type ProjectGitOptions,
  revertCommitMessage,
  parseAgentCommit,
} from './project-git.js';
export { decideRevert, type RevertDecision, type RevertState, type RevertPath } from './decision.js';
export {
  createObjectEngine,
  ObjectEngine,
  OBJECT_ENGINE,
  type ObjectEngineOptions,
} from './object-engine.js';
export { operationsInProgress } from './operations.js';
export {
  ObjectShadowProjectGit,
  type ObjectShadowProjectGitOptions,
} from './object-shadow/object-shadow-project-git.js';
export {
  ObjectShadowRepository,
  type ObjectShadowRepositoryOptions,
} from './object-shadow/object-shadow-repository.js';
export { SNAPSHOTS_REF, DEFAULT_MAX_FILE_BYTES, DEFAULT_KEEP_TURNS, turnRef } from './shadow-names.js';
