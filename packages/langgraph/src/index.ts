export type { CheckpointConfig, CheckpointLister, CheckpointTupleLike } from './checkpoint-lister.js';
export { createLangGraphDag, LangGraphDag, LANGGRAPH_AGENT, type LangGraphDagOptions } from './langgraph-dag.js';
export { hasNextStep } from './checkpoint-view.js';
export { readMessage, type MessageRecord, type ToolCallRef, type ItemPlace } from './read-message.js';
export { ThreadHistory, type CheckpointView } from './thread-history.js';
export { TypedDecoder, type TypedDecoderOptions } from './python/typed-decoder.js';
export { PythonObject } from './python/python-object.js';
export {
  StoredCheckpoints,
  checkpointRowTuple,
  type CheckpointLayout,
  type CheckpointRow,
  type StoredCheckpointsOptions,
} from './stored/stored-checkpoints.js';
export {
  openCheckpointsSqlite,
  openCheckpointsPostgres,
  type CheckpointStore,
  type OpenCheckpointsSqliteOptions,
  type OpenCheckpointsPostgresOptions,
} from './stored/open-checkpoints.js';
