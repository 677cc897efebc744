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
export { nodeWorkdirPolicy, type NodeWorkdirPolicyOptions } from './workdir-policy.js';
