/**
 * The part of LangGraph's `BaseCheckpointSaver` (`@langchain/langgraph-checkpoint`) this package
 * calls: `list`, and what its tuples hold. Typed here, structurally, so that any saver fits —
 * `SqliteSaver`, `PostgresSaver`, `MemorySaver`, a saver of its own — without this package
 * importing LangGraph at run time or in its declarations.
 */

/** A `RunnableConfig`'s `configurable` part as the savers read and return it. */
export interface CheckpointConfig {
  /** `thread_id`, `checkpoint_ns` (`''` for the graph itself), `checkpoint_id`. */
  configurable?: Record<string, unknown>;
}

/** One stored checkpoint as `list` yields it (a `CheckpointTuple`). */
export interface CheckpointTupleLike {
  /** Names the checkpoint: `thread_id`, `checkpoint_ns`, `checkpoint_id`. */
  config: CheckpointConfig;
  checkpoint: {
    /** A uuid6: ids sort as the checkpoints were written. */
    id: string;
    /** When it was written, an ISO 8601 date. */
    ts: string;
    /** The state's channels; the messages are one of them (`messages` by default). */
    channel_values: Record<string, unknown>;
  };
  /** The checkpoint's metadata (`source`, `step`, …); read only to recognise a delta channel. */
  metadata?: unknown;
}

/** Lists checkpoints, newest first (every LangGraph saver orders them by id, descending). */
export interface CheckpointLister {
  /**
   * The checkpoints matching `config.configurable`: of one thread (`thread_id`) and namespace
   * (`checkpoint_ns`), or of every thread when `thread_id` is absent. `options.limit` caps them.
   */
  list(config: CheckpointConfig, options?: { limit?: number }): AsyncIterable<CheckpointTupleLike>;
}
