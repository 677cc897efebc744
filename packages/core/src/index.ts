// The error API every package uses, re-exported so that an application or an adapter built on core
// alone can tell entity-git's errors apart (`isEntityGitError(err, code)`) and make its own
// (`normaliseError(err, { code, prefix })`); everything else of git's formats and object store is
// imported from @entity-git/git itself, but for the types core's options name (below).
export {
  EntityGitError,
  isEntityGitError,
  normaliseError,
  type ErrorCode,
  type ErrorContext,
} from '@entity-git/git';
// The types core's own options name (a mirror's storage and identity), so that configuring a
// mirror needs no second import.
export type { Storage, StorageFs, StorageStat, WorkTreeFile, Identity } from '@entity-git/git';
export type { DagNode, Session, Project, ProjectStatus, Role, JsonValue } from './model/types.js';
export { ROLES, PROJECT_STATUSES } from './model/types.js';
export { canonicalJson, canonicalJsonBytes, assertJson } from './model/canonical-json.js';
export {
  encodeId,
  decodeId,
  idSegment,
  messageFileName,
  sessionDirName,
  assertId,
  MAX_ID_BYTES,
  MAX_SEGMENT_BYTES,
} from './model/names.js';
export { validateNode, validateSession, sessionRow } from './model/validate.js';
export {
  derive,
  cutTurns,
  rides,
  type NodeShape,
  type TurnPlan,
  type BranchPlan,
  type Derivation,
} from './model/derive.js';
export {
  commitMessage,
  parseTrailers,
  nodeFacts,
  turnTime,
  defaultMetadataKeys,
  type NodeFacts,
  type MetadataKeys,
} from './model/commit-message.js';
export { textOf, foldLine } from './model/text.js';
export type { DagSource, DagWriter } from './dag/dag-source.js';
export type { ProjectStore } from './dag/project-store.js';
export { MemoryDag } from './dag/memory-dag.js';
export { readChangeMarkers } from './dag/change-markers.js';
export { DEFAULT_QUIET_MS } from './dag/quiet-time.js';
export { draftNode, type AppendNodeInput, type DraftNodeOptions } from './dag/draft-node.js';
export { isAbsolutePath } from './model/is-absolute-path.js';
export { packSession } from './service/pack-session.js';
export type {
  Mirror,
  SyncResult,
  ExtendedBranch,
  CommitInfo,
  LogPage,
  LogPageRequest,
  BranchInfo,
  TurnView,
  VerifyReport,
  Difference,
  DifferenceKind,
} from './mirror/mirror.js';
export { createMirror } from './mirror/session-mirror.js';
export type { MirrorOptions, Layout } from './mirror/mirror.js';
export { DEFAULT_IDENTITY } from './model/identity.js';
export { LAYOUTS, shardOf } from './mirror/layout.js';
export { SPLIT_MIN } from './mirror/split-index.js';
export { TURN_PACKS_MAX } from './mirror/sync/sinks.js';
export { SEGMENT_BYTES } from './mirror/repo/state.js';
export type { SyncOptions, VerifyOptions } from './mirror/mirror.js';
export {
  createMirrorService,
  type MirrorService,
  type MirrorServiceOptions,
  type TurnReport,
  type ServiceEvents,
  type ServiceEventName,
  type ServiceStatus,
  type SessionStatus,
} from './service/mirror-service.js';
export { createPacker, countLooseObjects, type Packer, type PackerOptions } from './service/packer.js';
export {
  reconcile,
  type ReconcileOptions,
  type ReconcileReport,
  type ReconcileEntry,
  type ReconcileProgress,
  type ReconcileAction,
} from './service/reconcile.js';
export { createActions, dispatch, type Actions, type ActionsOptions } from './actions/actions.js';
export { timelineCommit } from './actions/session-actions.js';
export { sessionStats, type StatsActionsOptions } from './actions/stats-actions.js';
export type { WorkdirPolicy } from './actions/workdir-policy.js';
export {
  invalidArgument,
  paramsObject,
  idParam,
  intParam,
  optionalString,
  shaParam,
  requireSession,
  requireProject,
} from './actions/params.js';
export type * from './actions/action-types.js';
// The project auto-commit as core sees it (implemented by @entity-git/project).
export type {
  ProjectGit,
  ProjectSnapshot,
  WorkdirKind,
  AfterTurnInput,
  AfterTurnResult,
  CommittedResult,
  SkippedResult,
  NothingToCommitResult,
  ShadowModeResult,
  SkipReason,
  ProjectCommit,
  RecoveredCommit,
  RevertInput,
  RevertResult,
  ResetResult,
  RevertedResult,
  AlreadyRevertedResult,
  AgentCommitsInput,
  AgentCommitsResult,
  AgentTurnCommit,
} from './project-seam.js';
export type * from './turn-files-seam.js';
export { IMMUTABLE_SESSION_FIELDS, immutableMeta, sessionRecord, META_REF, REPO_FORMAT } from './model/session-meta.js';
export { buildMetaCommit, metaCommitId } from './mirror/meta-ref.js';
export type { Logger, LogFields, LogLevel } from './observe/logger.js';
export { consoleLogger, emitLog, type ConsoleLoggerOptions } from './observe/loggers.js';
// For packages built on core that emit log events of their own (@entity-git/project).
export { now, since, codeOf, messageOf } from './observe/loggers.js';
export {
  readRepositoryChanges,
  type RepositoryChanges,
  type BranchChange,
  type PlacedMessage,
  type KnownRepository,
} from './search/search-walk.js';
export {
  searchQuery,
  searchText,
  searchWords,
  matcherOf,
  hasEveryWord,
  snippetOf,
  searchHit,
  type HitPlace,
  isRole,
  SEARCH_LIMIT_DEFAULT,
  SEARCH_LIMIT_MAX,
} from './search/search-text.js';
export type { SearchQuery, SearchHit, SearchResult, SearchSource } from './search/search-types.js';
export { Redactor } from './redact/redactor.js';
export { redactionMarker } from './redact/markers.js';
export { checkRedaction } from './redact/redaction-options.js';
export type { RedactionOptions, RedactionPattern, RedactionSetting } from './redact/redaction-options.js';
export { RedactingDag, redactingDag } from './redact/redacting-dag.js';
export { repositoryAt, scanRepository, type SecretFinding, type ScanOptions } from './redact/scan.js';
export {
  exportSession,
  exportFileName,
  EXPORT_FORMATS,
  type ExportFormat,
  type ExportOptions,
} from './export/export-session.js';
