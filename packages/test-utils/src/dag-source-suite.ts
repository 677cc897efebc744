import type { DagNode, Role } from '@entity-git/core';
import { afterEach, beforeEach, describe } from 'vitest';
import { changeMarkerTests } from './dag-source-suite/change-marker.js';
import { T0, type DagSourceFixture, type DagSourceSuiteOptions } from './dag-source-suite/fixture.js';
import { headTests } from './dag-source-suite/head.js';
import { nodeTests } from './dag-source-suite/nodes.js';
import { placeholderTests } from './dag-source-suite/placeholders.js';
import { refusedAppendTests } from './dag-source-suite/refused-appends.js';
import { sessionTests } from './dag-source-suite/sessions.js';

export type { DagSourceFixture, DagSourceSuiteOptions } from './dag-source-suite/fixture.js';
export type { MarkerEdits, MarkerNode } from './dag-source-suite/fixture.js';
export {
  testChangeMarkers,
  type ChangeMarkerFixture,
  type ChangeMarkerSuiteOptions,
} from './dag-source-suite/change-marker.js';

/**
 * The contract of {@link DagSource} and {@link DagWriter} (core's `dag-source.ts`), run against
 * one implementation. Every adapter's test file calls it; `MemoryDag` is the reference. The tests
 * are in `dag-source-suite/`, one file per part.
 */
export function testDagSource(options: DagSourceSuiteOptions): void {
  describe(`DagSource conformance: ${options.name}`, () => {
    let f: DagSourceFixture;
    beforeEach(async () => {
      f = await options.create();
    });
    afterEach(async () => {
      await f?.cleanup?.();
    });

    async function read(sessionId: string, afterSeq?: number, batchSize?: number): Promise<DagNode[]> {
      const out: DagNode[] = [];
      for await (const n of f.source.nodesAfter(
        sessionId,
        afterSeq,
        batchSize === undefined ? undefined : { batchSize },
      ))
        out.push(n);
      return out;
    }

    /** The session's head by `getHead`, or by `getSession` for a source without it (it is optional). */
    async function head(sessionId: string): Promise<string | null> {
      return f.source.getHead ? f.source.getHead(sessionId) : ((await f.source.getSession(sessionId))?.head ?? null);
    }

    /** A user/assistant chain of `count` nodes, `<prefix>1…`, each continuing from the previous. */
    async function chain(sessionId: string, count: number, prefix = 'n'): Promise<DagNode[]> {
      const nodes: DagNode[] = [];
      for (let i = 1; i <= count; i++) {
        const role: Role = i % 2 === 1 ? 'user' : 'assistant';
        nodes.push(
          await f.writer.appendNode({
            id: `${prefix}${i}`,
            session_id: sessionId,
            role,
            content: `${role} says ${i}`,
            predecessor: nodes.at(-1)?.id ?? null,
            created_at: T0 + i,
          }),
        );
      }
      return nodes;
    }

    // The parts see the current test's fixture through this view (each test gets a new one).
    const current: DagSourceFixture = {
      get source() {
        return f.source;
      },
      get writer() {
        return f.writer;
      },
      get rowEdits() {
        return f.rowEdits;
      },
    };
    const helpers = { read, head, chain };
    sessionTests(current, helpers);
    nodeTests(current, helpers);
    placeholderTests(current, helpers);
    headTests(current, helpers);
    refusedAppendTests(current, helpers);
    changeMarkerTests(current, helpers);
  });
}
