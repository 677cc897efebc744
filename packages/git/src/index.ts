export {
  EntityGitError,
  isEntityGitError,
  fsErrorCode,
  isQuotaError,
  normaliseError,
  type ErrorCode,
  type ErrorContext,
  type ErrorVerdict,
} from './errors.js';
export { utf8, fromUtf8, utf8Length } from './bytes/utf8.js';
export { toHex, fromHex } from './bytes/hex.js';
export { concatBytes } from './bytes/concat.js';
export { compareBytes } from './bytes/compare.js';
export { portableCodec, storedZlib, sha1Hex, sha1OfParts, type Codec } from './codec/codec.js';
export { fixedZlib, FIXED_DEFLATE_MAX } from './codec/fixed-deflate.js';
export type { Storage, StorageFs, StorageStat, WorkTreeFile } from './storage/storage.js';
export { Store, storeFor } from './storage/store.js';
export { joinPath, dirname, uniqueSuffix } from './storage/paths.js';
export { KeyedMutex } from './storage/mutex.js';
export { memoryStorage, MEMORY_STORAGE } from './storage/memory-storage.js';
export {
  frame,
  frameText,
  unframe,
  gitBlobId,
  objectId,
  isOid,
  type ObjectType,
} from './objects/frame.js';
export { buildTree, extendTree, parseTree, entryBytes, type TreeEntry } from './objects/tree.js';
export {
  buildCommit,
  parseCommit,
  assertIdentity,
  type Identity,
  type CommitFields,
  type ParsedCommit,
} from './objects/commit.js';
export { ObjectStore } from './object-store.js';
export { isAncestor } from './ancestry.js';
export { RefStore, ZERO_OID, parseReflog, refsUnder, type RefOptions, type ReflogEntry } from './refs.js';
export {
  acquireLockFile,
  tryLockFile,
  lockOptions,
  LOCK_DEFAULTS,
  type LockOptions,
} from './lock-file.js';
export { applyDelta, applyDeltas, prefixSuffixDelta } from './pack/delta.js';
export { idxOids, countPacks } from './pack/pack-index.js';
export { PackBuilder, STORED_BLOB_MAX } from './pack/pack-builder.js';
export { writeRepositoryPack, type PackReport } from './repository-pack.js';
export { CommitGraph, COMMIT_GRAPH_PATH, graphCommits, type GraphCommit } from './commit-graph.js';
export { buildCommitGraph, buildCommitGraphSteps, writeCommitGraph } from './commit-graph-write.js';
export {
  buildIndex,
  buildIndexSteps,
  buildSplitIndex,
  parseIndex,
  readIndex,
  entryFromStat,
  type IndexEntry,
  type SharedIndex,
} from './index-file.js';
export { loadIsoGit } from './iso-git.js';
export {
  readWorkIndex,
  writeWorkIndex,
  unsupportedIndex,
  type WorkIndex,
  type WorkIndexEntry,
} from './worktree/work-index.js';
export {
  parseIgnore,
  matchRules,
  isIgnored,
  type IgnoreRule,
  type IgnoreStack,
} from './worktree/gitignore.js';
export { parseGitConfig, configValue, configBool, type GitConfig } from './worktree/git-config.js';
