export { nodeStorage, nodeCodec, defaultRoot, DRIVER_NAME, type NodeStorageOptions } from './node-storage.js';
export { createNodeMirror, type NodeMirrorOptions } from './node-mirror.js';
export { nativeGitAvailable } from './native-git-available.js';
export { nativeRepack, createNodePacker, type NativeRepackOptions, type NodePackerOptions } from './packing.js';
export {
  findGitRepositories,
  planProjectImport,
  IMPORT_MAX_DEPTH,
  IMPORT_MAX_REPOS,
  type ImportCandidate,
} from './project-import.js';
export {
  identifySessionRepository,
  listSessionRepositories,
  type SessionRepository,
  type SessionRepositories,
  type ForeignEntry,
} from './session-repositories.js';
export { diskUsage, treeSize, type DiskSize, type DiskUsageReport, type SessionDiskUsage } from './disk-usage.js';
export {
  pruneSessions,
  pruneSessionRepository,
  PRUNE_TRASH,
  type PruneOptions,
  type PruneSessionOptions,
  type PruneReport,
  type PrunedRepository,
} from './prune.js';
export { bundleRepository, type BundleOptions } from './bundle.js';
export { nodeWorkdirPolicy, type NodeWorkdirPolicyOptions } from './workdir-policy.js';
