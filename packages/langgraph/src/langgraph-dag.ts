import { EntityGitError, type DagNode, type DagSource, type Session } from '@entity-git/core';
import { KeyedMutex } from '@entity-git/git';
import type { CheckpointLister, CheckpointTupleLike } from './checkpoint-lister.js';
import { checkpointView, type RecordPool } from './checkpoint-view.js';
import { ThreadHistory, type CheckpointView } from './thread-history.js';

/** The session rows' `agent_id`, and the name of this source in its errors. */
export const LANGGRAPH_AGENT = 'langgraph';

/** Bumped whenever the mapping changes, so an old marker never vouches for a new mapping. */
const MARKER_VERSION = 1;

export interface LangGraphDagOptions {
  /** The graph's checkpointer: `SqliteSaver`, `PostgresSaver`, `MemorySaver`, any `BaseCheckpointSaver`. */
  saver: CheckpointLister;
  /**
   * The threads to mirror, or a function that lists them. Default: every thread the saver
   * holds, found by listing every checkpoint of every thread (the saver API has no cheaper way;
   * pass the ids when the application keeps them).
   */
  threads?: readonly string[] | (() => readonly string[] | Promise<readonly string[]>);
  /** The state's channel holding the conversation. Default `'messages'` (`MessagesAnnotation`'s). */
  channel?: string;
  /** How many threads' histories are kept in memory between reads (least recently read go first). Default 64. */
  cachedThreads?: number;
}

/**
 * LangGraph's checkpoints as a {@link DagSource}: a thread is a session, the messages of its
 * messages channel are the nodes, and a checkpoint written from an older one (time travel) is a
 * fork. Read-only: it only calls the saver's `list`. Build it with {@link createLangGraphDag}.
 */
export class LangGraphDag implements DagSource {
  private readonly options: Readonly<Required<Omit<LangGraphDagOptions, 'threads'>>> &
    Pick<LangGraphDagOptions, 'threads'>;
  private readonly histories = new Map<string, ThreadHistory>();
  private readonly reads = new KeyedMutex();

  constructor(options: LangGraphDagOptions) {
    this.options = Object.freeze({ channel: 'messages', cachedThreads: 64, ...options });
  }

  async listSessions(): Promise<string[]> {
    const given = this.options.threads;
    if (given === undefined) return this.everyThread();
    const ids = typeof given === 'function' ? await given() : given;
    if (!Array.isArray(ids))
      throw new EntityGitError('INVALID_OPTION', '[langgraph] threads gave no array of thread ids');
    const out: string[] = [];
    for (const id of new Set(ids)) {
      if (typeof id !== 'string' || id === '') {
        throw new EntityGitError('INVALID_OPTION', `[langgraph] threads lists ${JSON.stringify(id)}, not a thread id`);
      }
      if ((await this.newest(id)) !== null) out.push(id);
    }
    return out;
  }

  async getSession(sessionId: string): Promise<Session | null> {
    const h = await this.history(sessionId);
    if (h.taken.size === 0) return null;
    return {
      id: sessionId,
      title: null,
      agent_id: LANGGRAPH_AGENT,
      model: null,
      project_id: null,
      head: h.head,
      created_at: h.createdAt ?? 0,
      metadata: { source: LANGGRAPH_AGENT, channel: this.options.channel },
    };
  }

  async *nodesAfter(sessionId: string, afterSeq = 0): AsyncIterable<DagNode> {
    const h = await this.history(sessionId);
    // Seqs are 1..n in order, so the node after `afterSeq` sits at index `afterSeq`.
    for (let i = Math.max(0, Math.floor(afterSeq)); i < h.nodes.length; i++) {
      const node = h.nodes[i]!;
      const metadata = h.isPending(node.id) ? { ...(node.metadata as object), pending: true } : node.metadata;
      // A copy: nodes are JSON values, so a JSON round trip is exact.
      yield JSON.parse(JSON.stringify({ ...node, metadata })) as DagNode;
    }
  }

  async getHead(sessionId: string): Promise<string | null> {
    return (await this.history(sessionId)).head;
  }

  /**
   * The thread's newest checkpoint id (with the mapping's version and the channel): LangGraph
   * writes every change of a thread — a step, an `updateState`, a run resumed from the past —
   * as a new checkpoint, whose uuid6 id sorts after every earlier one, and never rewrites one.
   */
  async changeMarker(sessionId: string): Promise<string | null> {
    const newest = await this.newest(sessionId);
    return newest === null ? null : `langgraph/${MARKER_VERSION} ${JSON.stringify(this.options.channel)} ${newest}`;
  }

  /** The thread's history with every checkpoint the saver holds now taken. */
  private history(threadId: string): Promise<ThreadHistory> {
    return this.reads.run(threadId, async () => {
      const newest = await this.newest(threadId);
      if (newest === null) {
        this.histories.delete(threadId);
        return new ThreadHistory(threadId);
      }
      const h = this.histories.get(threadId) ?? new ThreadHistory(threadId);
      // One cheap `list(…, { limit: 1 })` when nothing was written since: a saver's full `list`
      // reads every row of the thread (SqliteSaver, PostgresSaver), and a sync asks several times.
      if (!h.taken.has(newest)) h.take(await this.freshViews(threadId, h));
      if (h.taken.size > 0) this.keep(threadId, h);
      return h;
    });
  }

  /** The checkpoints of the thread newer than those `h` took, oldest first. */
  private async freshViews(threadId: string, h: ThreadHistory): Promise<CheckpointView[]> {
    const pool: RecordPool = new Map();
    const fresh: CheckpointView[] = [];
    await this.each({ thread_id: threadId, checkpoint_ns: '' }, undefined, (t) => {
      if (!ofThread(t, threadId)) return true;
      // Newest first: from a checkpoint already taken on, every one is.
      if (h.taken.has(t.checkpoint.id)) return false;
      fresh.push(checkpointView(t, this.options.channel, threadId, pool));
      return true;
    });
    return fresh.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  private keep(threadId: string, h: ThreadHistory): void {
    this.histories.delete(threadId);
    this.histories.set(threadId, h);
    for (const oldest of this.histories.keys()) {
      if (this.histories.size <= this.options.cachedThreads) break;
      this.histories.delete(oldest);
    }
  }

  private async newest(threadId: string): Promise<string | null> {
    if (threadId === '') return null;
    let id: string | null = null;
    await this.each({ thread_id: threadId, checkpoint_ns: '' }, { limit: 1 }, (t) => {
      if (!ofThread(t, threadId)) return true;
      id = t.checkpoint.id;
      return false;
    });
    return id;
  }

  /** Every thread with a checkpoint of the graph itself, in the order they began. */
  private async everyThread(): Promise<string[]> {
    const first = new Map<string, string>();
    await this.each({ checkpoint_ns: '' }, undefined, (t) => {
      const id = t.config.configurable?.thread_id;
      if ((typeof id !== 'string' && typeof id !== 'number') || !ofThread(t, String(id))) return true;
      const key = String(id);
      const seen = first.get(key);
      if (seen === undefined || t.checkpoint.id < seen) first.set(key, t.checkpoint.id);
      return true;
    });
    return [...first].sort(([a, x], [b, y]) => (x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0)).map(([id]) => id);
  }

  /** Lists checkpoints, handing each to `visit` until it answers false; the saver's failures are `DB_ERROR`. */
  private async each(
    configurable: Record<string, unknown>,
    options: { limit?: number } | undefined,
    visit: (t: CheckpointTupleLike) => boolean,
  ): Promise<void> {
    try {
      for await (const t of this.options.saver.list({ configurable }, options)) if (!visit(t)) break;
    } catch (cause) {
      if (cause instanceof EntityGitError) throw cause;
      throw new EntityGitError(
        'DB_ERROR',
        `[langgraph] the checkpointer failed to list checkpoints: ${cause instanceof Error ? cause.message : String(cause)}`,
        { threadId: configurable.thread_id ?? null },
        { cause },
      );
    }
  }
}

/** Whether a listed checkpoint is the graph's own (namespace `''`) in this thread. */
function ofThread(t: CheckpointTupleLike, threadId: string): boolean {
  const c = t.config.configurable ?? {};
  const ns = c.checkpoint_ns ?? '';
  return String(c.thread_id) === threadId && ns === '';
}

/**
 * A {@link LangGraphDag} over a checkpointer. Options are checked here: a `saver` without `list`,
 * an empty `channel` or a `cachedThreads` that is not a positive integer is `INVALID_OPTION`.
 */
export function createLangGraphDag(options: LangGraphDagOptions): LangGraphDag {
  if (typeof options?.saver?.list !== 'function') {
    throw new EntityGitError(
      'INVALID_OPTION',
      '[langgraph] saver must be a LangGraph checkpointer (it has no list method)',
    );
  }
  if (options.channel !== undefined && (typeof options.channel !== 'string' || options.channel === '')) {
    throw new EntityGitError('INVALID_OPTION', '[langgraph] channel must be a non-empty string');
  }
  const n = options.cachedThreads;
  if (n !== undefined && !(Number.isInteger(n) && n > 0)) {
    throw new EntityGitError('INVALID_OPTION', '[langgraph] cachedThreads must be a positive integer');
  }
  const t = options.threads;
  if (t !== undefined && typeof t !== 'function' && !Array.isArray(t)) {
    throw new EntityGitError('INVALID_OPTION', '[langgraph] threads must be an array of thread ids or a function');
  }
  return new LangGraphDag(options);
}
