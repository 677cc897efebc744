export { nodeStorage, nodeCodec, defaultRoot, DRIVER_NAME, type NodeStorageOptions } from './node-storage.js';
export { createNodeMirror, type NodeMirrorOptions } from './node-mirror.js';
export {
  nativeGitEngine,
  defaultProjectGitEngine,
  nativeGitAvailable,
  NATIVE_GIT_ENGINE,
  type NativeGitEngineOptions,
} from './native-git-engine.js';
export {
  createNodeProjectGit,
  workdirLock,
  workdirJournal,
  type NodeProjectGitOptions,
  type WorkdirLockOptions,
} from './project-coordination.js';
export { nativeRepack, createNodePacker, type NativeRepackOptions, type NodePackerOptions } from './packing.js';
export {
  findGitRepositories,
  planProjectImport,
  IMPORT_MAX_DEPTH,
  IMPORT_MAX_REPOS,
  type ImportCandidate,
} from './project-import.js';
export { nodeWorkdirPolicy, type NodeWorkdirPolicyOptions } from './workdir-policy.js';
