import { EntityGitError } from '@entity-git/core';
import type { CheckpointTupleLike } from './checkpoint-lister.js';
import { readMessage, type MessageRecord } from './read-message.js';
import type { CheckpointView } from './thread-history.js';

/**
 * Records met in one read of a thread, by message id and key: a message is in every checkpoint
 * after the one that added it, and a long thread's checkpoints would otherwise hold a copy of
 * every message each. Read newest first, each record is overwritten by an older copy, so a node
 * gets the message as it was when first written (the fields outside its key included).
 */
export type RecordPool = Map<string, MessageRecord>;

/** One checkpoint's channel read into a {@link CheckpointView}. */
export function checkpointView(
  tuple: CheckpointTupleLike,
  channel: string,
  threadId: string,
  pool: RecordPool,
): CheckpointView {
  const { id, ts, channel_values: values } = tuple.checkpoint;
  const value = values[channel];
  if (isDelta(value) || (value === undefined && deltaCounted(tuple.metadata, channel))) {
    throw new EntityGitError(
      'INVALID_OPTION',
      `[langgraph] channel ${JSON.stringify(channel)} of thread ${JSON.stringify(threadId)} is a DeltaChannel, whose messages are stored as writes, not in the checkpoint: not supported`,
      { threadId, checkpointId: id, channel },
    );
  }
  if (value !== undefined && value !== null && !Array.isArray(value)) {
    throw new EntityGitError(
      'INVALID_NODE',
      `[langgraph] channel ${JSON.stringify(channel)} of checkpoint ${JSON.stringify(id)} (thread ${JSON.stringify(threadId)}) is not a list of messages`,
      { threadId, checkpointId: id, channel },
    );
  }
  const messages: MessageRecord[] = [];
  ((value ?? []) as unknown[]).forEach((item, index) => {
    const record = readMessage(item, { threadId, checkpointId: id, index });
    if (record === null) return;
    const key = `${record.id ?? ''}\u0000${record.key}`;
    const met = pool.get(key);
    if (met === undefined) pool.set(key, record);
    else Object.assign(met, record);
    messages.push(met ?? record);
  });
  const ms = Date.parse(ts);
  return { id, time: Number.isFinite(ms) ? ms / 1000 : null, messages, next: hasNextStep(values) };
}

/**
 * Whether LangGraph has a step to run from a checkpoint: the input waits for `__start__`, an
 * edge to a node waits in a `branch:to:<node>` channel, a `Send` in `__pregel_tasks`. That is
 * how LangGraph (JS 1.x, Python since 0.3) stores what triggers the next step; a checkpoint
 * laid out otherwise reads as finished, and a sync in the middle of such a run commits the turn
 * as it stands (a later sync commits it again, completed).
 */
export function hasNextStep(values: Readonly<Record<string, unknown>>): boolean {
  for (const name of Object.keys(values)) {
    if (name === '__start__' || name.startsWith('branch:to:')) return true;
  }
  const tasks = values.__pregel_tasks;
  return Array.isArray(tasks) && tasks.length > 0;
}

function isDelta(value: unknown): boolean {
  return value !== null && typeof value === 'object' && (value as { lg_name?: unknown }).lg_name === 'DeltaSnapshot';
}

function deltaCounted(metadata: unknown, channel: string): boolean {
  if (metadata === null || typeof metadata !== 'object') return false;
  const counters = (metadata as { counters_since_delta_snapshot?: unknown }).counters_since_delta_snapshot;
  return counters !== null && typeof counters === 'object' && Object.hasOwn(counters, channel);
}
