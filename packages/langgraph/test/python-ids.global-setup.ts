// Runs in Node before the browser tests: writes Python LangGraph's checkpoints (a fork and a retry,
// tool calls, a value of an unknown type, the JSON fallback) into a SqliteSaver file, mirrors
// it with the CLI's reader and node-fs, and hands the table's rows and the branch tips to
// python-decoding.browser.test.ts, which must find the very same ids in Chromium from an
// IndexedDB copy of the rows. Derived in the run, so no commit id is written down.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeMirror } from '@entity-git/node-fs';
import Database from 'better-sqlite3';
import type { TestProject } from 'vitest/node';
import { openCheckpointsSqlite } from '../src/index.js';
import { fallbackThread, oddThread, travelThread } from './helpers/python-fixtures.js';
import { writePythonSqlite } from './helpers/python-store.js';

/** A row of the checkpoints table, its values as base64. */
export interface CopiedRow {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  type: string;
  checkpoint: string;
  metadata: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The rows of a SqliteSaver file of Python-written checkpoints. */
    pythonRows: CopiedRow[];
    /** thread → branch → commit id, as node-fs mirrored that file through `openCheckpointsSqlite`. */
    pythonTips: Record<string, Record<string, string>>;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'eg-langgraph-python-'));
  try {
    const file = join(dir, 'python.sqlite');
    writePythonSqlite(file, [...travelThread(), ...oddThread(), ...fallbackThread()]);
    const db = new Database(file, { readonly: true });
    const rows = db.prepare('select * from checkpoints order by thread_id, checkpoint_id').all() as Array<
      Record<string, string | Buffer>
    >;
    db.close();
    project.provide(
      'pythonRows',
      rows.map((r) => ({
        thread_id: String(r.thread_id),
        checkpoint_ns: String(r.checkpoint_ns),
        checkpoint_id: String(r.checkpoint_id),
        type: String(r.type),
        checkpoint: (r.checkpoint as Buffer).toString('base64'),
        metadata: (r.metadata as Buffer).toString('base64'),
      })),
    );
    const store = await openCheckpointsSqlite({ file });
    const mirror = createNodeMirror({ dag: store.dag, root: join(dir, 'sessions') });
    const tips: Record<string, Record<string, string>> = {};
    for (const thread of await store.dag.listSessions()) {
      await mirror.sync(thread);
      tips[thread] = Object.fromEntries((await mirror.branches(thread)).map((b) => [b.name, b.commit]));
    }
    await store.close();
    project.provide('pythonTips', tips);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
