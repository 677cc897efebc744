import { EntityGitError } from '@entity-git/git';
import type { DagNode } from '../model/types.js';
import { validateNode } from '../model/validate.js';
import type { DagWriter } from './dag-source.js';

/** An append as {@link DagWriter.appendNode} takes it: a node without its seq, which the writer assigns. */
export type AppendNodeInput = Parameters<DagWriter['appendNode']>[0];

export interface DraftNodeOptions {
  /** The clock for a default `created_at`, in seconds since the epoch; called only when the input has none. */
  now: () => number;
  /**
   * The node's seq (default `1`: a stand-in, for a writer that assigns the real one inside its
   * transaction, after the draft has been checked).
   */
  seq?: number;
  /**
   * Put before the message of the "not an object" error, e.g. `'[sqlite]'` (default: none). Errors
   * of `validateNode` are passed through as they are.
   */
  prefix?: string;
}

/**
 * The node an append stores, as every {@link DagWriter} builds it: the input's fields, with
 * `predecessor`, `caller` and `metadata` defaulting to `null` and `created_at` to `now()`, then
 * checked by `validateNode` (`INVALID_NODE`, `INVALID_ID`, `NON_JSON_VALUE`). An input that is not
 * an object is `INVALID_NODE`. The values are the caller's own (not copied).
 */
export function draftNode(input: AppendNodeInput, options: DraftNodeOptions): DagNode {
  if (typeof input !== 'object' || input === null)
    throw new EntityGitError(
      'INVALID_NODE',
      options.prefix === undefined ? 'a node must be an object' : `${options.prefix} a node must be an object`,
    );
  const node: DagNode = {
    id: input.id,
    session_id: input.session_id,
    seq: options.seq ?? 1,
    role: input.role,
    content: input.content,
    predecessor: input.predecessor ?? null,
    caller: input.caller ?? null,
    created_at: input.created_at ?? options.now(),
    metadata: input.metadata ?? null,
  };
  validateNode(node);
  return node;
}
