import type { DagNode, JsonValue } from '@entity-git/core';
import type { MessageRecord } from './read-message.js';

/** One checkpoint as the history needs it: its messages read, its time, whether a step follows. */
export interface CheckpointView {
  id: string;
  /** Seconds since the epoch, from the checkpoint's `ts`; null when `ts` does not parse. */
  time: number | null;
  messages: readonly MessageRecord[];
  /** LangGraph has a step to run from this checkpoint (the run is going on, or stopped half-way). */
  next: boolean;
}

/**
 * The DAG of one thread, built from its checkpoints oldest to newest and extended as new ones
 * come: a pure function of the checkpoints taken so far, in id order.
 *
 * - A message is a node the first time it is met (seq = order of first appearance); met again
 *   with the same id and content it is that node. Met with its id but other content (replaced
 *   by id: an edit through `updateState`, a rewrite) it is a new node, the message's next
 *   version, id `<id>.v2`, `.v3`… (`metadata.message_id` the message's) — both versions are kept,
 *   and the edit is a fork.
 * - A message without an id is the node of an earlier id-less message at the same position,
 *   after the same node, with the same content; else a new node `m<seq>`.
 * - A tool message rides on the nearest earlier assistant message of the channel whose tool
 *   calls name its `tool_call_id` (caller and predecessor); any other message continues from
 *   the nearest earlier message that does not ride (null at the start of the channel).
 * - A node's time is that of the checkpoint where it was first met. Nothing else of a checkpoint
 *   (its id, which is random in part) is in a node: the same messages at the same times give the
 *   same nodes, whichever saver or run wrote them.
 */
export class ThreadHistory {
  /** The nodes in seq order (seq = index + 1), without `pending`. */
  readonly nodes: DagNode[] = [];
  /** Checkpoint ids taken so far. */
  readonly taken = new Set<string>();
  /** The session's time: the first checkpoint's. */
  createdAt: number | null = null;
  /** The node the newest checkpoint ends with, null when its channel is empty. */
  head: string | null = null;

  /** Node id → seq. */
  private readonly seqs = new Map<string, number>();
  /** Message id → its versions, oldest first. */
  private readonly versions = new Map<string, Array<{ key: string; node: string }>>();
  private readonly idless = new Map<string, string>();
  /** Nodes some non-riding node continues from. */
  private readonly continued = new Set<string>();
  /** The newest checkpoint's last non-riding node when LangGraph has a step to run from it. */
  private waiting: string | null = null;
  private lastTime = 0;

  constructor(private readonly threadId: string) {}

  /** Takes checkpoints newer than every one taken so far, in id order. */
  take(views: readonly CheckpointView[]): void {
    for (const view of views) this.takeOne(view);
  }

  /**
   * Whether a node is still being written: the newest checkpoint has a step to run (its run is
   * going on, or stopped at an interrupt or an error), the node is that checkpoint's last message
   * that does not ride, and nothing continues from it yet. Its turn is then not committed.
   */
  isPending(nodeId: string): boolean {
    return nodeId === this.waiting && !this.continued.has(nodeId);
  }

  private takeOne(view: CheckpointView): void {
    this.taken.add(view.id);
    const time = view.time ?? this.lastTime;
    this.lastTime = time;
    this.createdAt ??= time;
    /** The nodes of this checkpoint's channel so far, for the callers of its tool messages. */
    const channel: Array<{ record: MessageRecord; node: DagNode }> = [];
    let prev: string | null = null;
    view.messages.forEach((record, index) => {
      const node = this.nodeOf(record, index, { prev, channel, time });
      channel.push({ record, node });
      if (!(node.role === 'tool' && node.caller !== null)) prev = node.id;
    });
    this.head = channel.at(-1)?.node.id ?? null;
    this.waiting = view.next ? prev : null;
  }

  /**
   * The node of the message `record` at `index` of a checkpoint's channel: `prev` is the node it
   * follows, `channel` the nodes before it (for a tool message's caller), `time` the checkpoint's.
   */
  private nodeOf(
    record: MessageRecord,
    index: number,
    at: { prev: string | null; channel: ReadonlyArray<{ record: MessageRecord; node: DagNode }>; time: number },
  ): DagNode {
    const { prev, channel, time } = at;
    const idlessKey = record.id === null ? JSON.stringify([index, prev, record.key]) : '';
    const known =
      record.id === null
        ? this.idless.get(idlessKey)
        : this.versions.get(record.id)?.find((v) => v.key === record.key)?.node;
    if (known !== undefined) return this.nodes[this.seqs.get(known)! - 1]!;

    const call = record.role === 'tool' && record.toolCallId !== null ? callerOf(record.toolCallId, channel) : null;
    const seq = this.nodes.length + 1;
    const id = this.freshId(record.id ?? `m${seq}`);
    const metadata: Record<string, JsonValue> = { ...record.metadata };
    // A later version's node id is not the message's: say which message it is a version of.
    if (record.id !== null && id !== record.id) metadata.message_id = record.id;
    if (record.role === 'tool') {
      const tool = call?.name ?? record.name;
      if (tool !== null) metadata.tool = tool;
    }
    const node: DagNode = {
      id,
      session_id: this.threadId,
      seq,
      role: record.role,
      content: record.content,
      predecessor: call?.node ?? prev,
      caller: call?.node ?? null,
      created_at: time,
      metadata,
    };
    this.nodes.push(node);
    this.seqs.set(id, node.seq);
    if (call === null && node.predecessor !== null) this.continued.add(node.predecessor);
    if (record.id === null) this.idless.set(idlessKey, id);
    else {
      const list = this.versions.get(record.id);
      if (list) list.push({ key: record.key, node: id });
      else this.versions.set(record.id, [{ key: record.key, node: id }]);
    }
    return node;
  }

  /** `base` when no node has it, else `base.v2`, `base.v3`…, the first free. */
  private freshId(base: string): string {
    if (!this.seqs.has(base)) return base;
    for (let k = 2; ; k++) {
      const id = `${base}.v${k}`;
      if (!this.seqs.has(id)) return id;
    }
  }
}

/** The nearest earlier assistant message of the channel whose tool calls name `callId`. */
function callerOf(
  callId: string,
  channel: ReadonlyArray<{ record: MessageRecord; node: DagNode }>,
): { node: string; name: string | null } | null {
  for (let i = channel.length - 1; i >= 0; i--) {
    const { record, node } = channel[i]!;
    if (record.role !== 'assistant') continue;
    const call = record.toolCalls.find((c) => c.id === callId);
    if (call) return { node: node.id, name: call.name };
  }
  return null;
}
