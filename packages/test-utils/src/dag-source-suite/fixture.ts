import type { DagNode, DagSource, DagWriter } from '@entity-git/core';
import { expect } from 'vitest';

/** A fresh, empty DAG for one test: its read side, its write side, and how to dispose of it. */
export interface DagSourceFixture {
  source: DagSource;
  writer: DagWriter;
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
