// @entity-git/project/node: the project auto-commit's Node parts — native git as the engine, and
// the cross-process workdir lock and pending-edit journal in files. Kept out of the main entry so
// that a browser bundle never reaches node:child_process.
export {
  nativeGitEngine,
  defaultProjectGitEngine,
  NATIVE_GIT_ENGINE,
  type NativeGitEngineOptions,
} from './native-git-engine.js';
export {
  createNodeProjectGit,
  workdirLock,
  workdirJournal,
  workdirLedger,
  type NodeProjectGitOptions,
  type WorkdirLockOptions,
} from './workdir-coordination.js';
export { defaultStateDir, ensurePrivateDir } from './private-dir.js';
export {
  ShadowProjectGit,
  PROJECT_MODES,
  type ProjectMode,
  type ProjectShadowSettings,
  type ShadowProjectGitOptions,
} from './shadow-project-git.js';
export {
  ShadowRepository,
  SNAPSHOTS_REF,
  DEFAULT_MAX_FILE_BYTES,
  type ShadowRepositoryOptions,
  type Snapshot,
} from './shadow-repository.js';
export { turnRef } from './shadow-turn-files.js';
export { closeShadowWatchers } from './shadow-snapshot-state.js';
export { pruneSnapshots, DEFAULT_KEEP_TURNS, type PruneResult } from './shadow-prune.js';
export { createShadowProjectGit, type NodeShadowProjectGit } from './shadow-choice.js';
