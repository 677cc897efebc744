/** The agent frameworks' stores the CLI reads with no configuration, by their tables. */
export interface FrameworkSchema {
  /** As the CLI prints it and `--json`'s `recognised` gives it. */
  readonly name: 'langgraph' | 'mastra';
  /** The engine whose layout this is. */
  readonly engine: 'sqlite' | 'postgres';
  /** One line for people. */
  readonly description: string;
  /** These tables, each with at least these columns. */
  readonly signature: Readonly<Record<string, readonly string[]>>;
}

const CHECKPOINT_KEY = ['thread_id', 'checkpoint_ns', 'checkpoint_id'];

/** In the order they are tried. */
export const FRAMEWORK_SCHEMAS: readonly FrameworkSchema[] = Object.freeze<FrameworkSchema[]>([
  {
    name: 'langgraph',
    engine: 'sqlite',
    description:
      "LangGraph's SqliteSaver checkpoints (Python or LangGraph.js: checkpoints + writes; msgpack or JSON values)",
    signature: {
      checkpoints: [...CHECKPOINT_KEY, 'parent_checkpoint_id', 'type', 'checkpoint', 'metadata'],
      writes: [...CHECKPOINT_KEY, 'task_id', 'idx', 'channel', 'type', 'value'],
    },
  },
  {
    name: 'langgraph',
    engine: 'postgres',
    description:
      "LangGraph's PostgresSaver checkpoints (Python or LangGraph.js: checkpoints + checkpoint_blobs, a channel's value per version)",
    signature: {
      checkpoints: [...CHECKPOINT_KEY, 'parent_checkpoint_id', 'checkpoint', 'metadata'],
      checkpoint_blobs: ['thread_id', 'checkpoint_ns', 'channel', 'version', 'type', 'blob'],
    },
  },
  ...(['sqlite', 'postgres'] as const).map((engine) => ({
    name: 'mastra' as const,
    engine,
    description: `Mastra's storage (${engine === 'sqlite' ? '@mastra/libsql' : '@mastra/pg'}: mastra_threads + mastra_messages)`,
    signature: {
      mastra_threads: ['id', 'resourceId', 'title', 'createdAt'],
      mastra_messages: ['id', 'thread_id', 'content', 'role', 'createdAt'],
    },
  })),
]);

/** The columns of each table of a database (lower-cased names are not assumed: as the catalogue gives them). */
export type Tables = ReadonlyMap<string, ReadonlySet<string>>;

/**
 * The framework store a database is, by its tables, or null. Never one that holds entity-git's
 * own `nodes` table: that database is read as entity-git's, as it always was.
 */
export function recogniseFramework(tables: Tables, engine: 'sqlite' | 'postgres'): FrameworkSchema | null {
  if (tables.has('nodes')) return null;
  return (
    FRAMEWORK_SCHEMAS.find(
      (s) =>
        s.engine === engine &&
        Object.entries(s.signature).every(([table, columns]) => columns.every((c) => tables.get(table)?.has(c))),
    ) ?? null
  );
}
