import type { DagNode, DagSource, DagWriter } from '@entity-git/core';
import { expect } from 'vitest';

/** A node the change-marker part writes: a user or an assistant message with text. */
export interface MarkerNode {
  id: string;
  session_id: string;
  role: 'user' | 'assistant';
  content: string;
  predecessor: string | null;
  created_at: number;
}

/**
 * The writes the change-marker part makes, each as the source's writers make it: through a
 * `DagWriter` for a source that has one, as the application's own SQL for a database entity-git
 * only reads. The optional ones are the writes a `DagWriter` has no method for.
 */
export interface MarkerEdits {
  /** A session with this title, no node, no head. */
  createSession(id: string, title: string): Promise<unknown>;
  /** A node at the session's next seq. */
  append(node: MarkerNode): Promise<unknown>;
  /** The node's content changed in place (`fillNode`, an `UPDATE`); every other field stays. */
  setContent(sessionId: string, nodeId: string, content: string): Promise<unknown>;
  /** The session's head moved (`null`: none). */
  setHead(sessionId: string, nodeId: string | null): Promise<unknown>;
  /** The node's whole row saved again with this content (SQLite `INSERT OR REPLACE`, an upsert). */
  replace?(node: MarkerNode): Promise<unknown>;
  /** The session row's title edited. */
  setTitle?(sessionId: string, title: string): Promise<unknown>;
  /** The node's row deleted. */
  deleteNode?(sessionId: string, nodeId: string): Promise<unknown>;
}

/** A fresh, empty DAG for one test: its read side, its write side, and how to dispose of it. */
export interface DagSourceFixture {
  source: DagSource;
  writer: DagWriter;
  /**
   * Writes of the database the writer has no method for (a row saved again whole, a title
   * edited, a row deleted), made by hand: the change-marker part checks them too when given.
   */
  rowEdits?: Pick<MarkerEdits, 'replace' | 'setTitle' | 'deleteNode'>;
  cleanup?: () => unknown;
}

export interface DagSourceSuiteOptions {
  /** Shown in the suite's title, e.g. `'sqlite'`. */
  name: string;
  /** Called before every test; the DAG must be empty. */
  create: () => Promise<DagSourceFixture>;
}

/** What the parts of the suite share, each bound to the current test's fixture. */
export interface SuiteHelpers {
  /** Every node `nodesAfter` yields, collected. */
  read(sessionId: string, afterSeq?: number, batchSize?: number): Promise<DagNode[]>;
  /** The session's head by `getHead`, or by `getSession` for a source without it (it is optional). */
  head(sessionId: string): Promise<string | null>;
  /** A user/assistant chain of `count` nodes, `<prefix>1…`, each continuing from the previous. */
  chain(sessionId: string, count: number, prefix?: string): Promise<DagNode[]>;
}

export const T0 = 1_700_000_000;

/** An error from the library with this literal `code` (tests never look at messages). */
export async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  await expect(promise).rejects.toMatchObject({ name: 'EntityGitError', code });
}
