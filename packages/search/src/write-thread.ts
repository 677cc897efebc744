import { Worker } from 'node:worker_threads';
import { EntityGitError, type ErrorCode } from '@entity-git/git';
import type { Carried } from './carried-writes.js';
import type { SyncDone } from './search-types.js';

/** What the write thread is started with: the root, the index file, and the flag it raises once closed. */
export interface ThreadData {
  root: string;
  file: string;
  closed: SharedArrayBuffer;
}

/** A message to the write thread: a batch of results to record in one transaction, or the end. */
export type ThreadRequest = { kind: 'record'; id: number; results: readonly SyncDone[] } | { kind: 'close' };

/** The write thread's answer to a batch: each result's outcome, in order. */
export interface ThreadAnswer {
  id: number;
  outcomes: (
    | { update: Exclude<Carried, EntityGitError> }
    | { error: { code: ErrorCode; message: string; data: Record<string, unknown> } }
  )[];
}

// The thread runs the built module. Run from the TypeScript sources (the tests and benches build
// first), this file is src/write-thread.ts and the thread's is in dist/: a thread gets no
// TypeScript loader.
const ENTRY = new URL(
  import.meta.url.endsWith('.ts') ? '../dist/write-thread-entry.js' : './write-thread-entry.js',
  import.meta.url,
);
/** How long `close` waits for the thread to finish what it was sent: beyond the busy timeout of a transaction. */
const CLOSE_WAIT_MS = 30_000;

/**
 * The search index's write thread, seen from the index: each batch of syncs' results posted to
 * it, answered with what became of each. The sync's thread spends only the post and the answer
 * on an update; the thread's own connection does the rest beside it (docs/design.md, 'Search').
 * Started at the first batch (a process that only searches never starts it), unreferenced (it
 * never keeps a process alive).
 */
export class WriteThread {
  readonly #data: Omit<ThreadData, 'closed'>;
  // The thread and the flag it raises once closed.
  #running: { worker: Worker; closed: Int32Array } | null = null;
  #failed: EntityGitError | null = null;
  #next = 0;
  readonly #waiting = new Map<number, { resolve: (c: Carried[]) => void; reject: (e: EntityGitError) => void }>();

  constructor(root: string, file: string) {
    this.#data = { root, file };
  }

  /** Whether the thread failed (or was closed): it records nothing more. */
  get failed(): boolean {
    return this.#failed !== null;
  }

  /**
   * The results recorded in one transaction on the thread (one each if that fails). Rejects when
   * the thread cannot run, or the results cannot be sent (what a structured clone refuses).
   */
  record(results: readonly SyncDone[]): Promise<Carried[]> {
    const worker = this.#started();
    if (worker === null) return Promise.reject(this.#failed);
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      worker.postMessage({ kind: 'record', id, results } satisfies ThreadRequest);
      // Referenced while an answer is awaited: a caller awaiting it keeps the process alive.
      if (this.#waiting.size === 0) worker.ref();
      this.#waiting.set(id, { resolve, reject });
    });
  }

  /**
   * Waits, blocked, until the thread has recorded every batch sent before and closed its
   * connection; it then ends by itself (the answers it sent still arrive). Records nothing more.
   */
  close(): void {
    if (this.#failed !== null) return;
    this.#failed = new EntityGitError('SEARCH_INDEX_ERROR', 'the search index is closed');
    if (this.#running === null) return;
    this.#running.worker.postMessage({ kind: 'close' } satisfies ThreadRequest);
    Atomics.wait(this.#running.closed, 0, 0, CLOSE_WAIT_MS);
  }

  #started(): Worker | null {
    if (this.#failed !== null) return null;
    if (this.#running !== null) return this.#running.worker;
    const closed = new SharedArrayBuffer(4);
    // No inherited flags: a `--conditions=source` would point the thread's imports at TypeScript.
    let worker: Worker;
    try {
      worker = new Worker(ENTRY, { workerData: { ...this.#data, closed } satisfies ThreadData, execArgv: [] });
    } catch (err) {
      this.#fail(this.#threadError(err));
      return null;
    }
    worker.unref();
    worker.on('message', (answer: ThreadAnswer) => this.#answered(answer));
    worker.on('error', (err) => this.#fail(this.#threadError(err)));
    worker.on('exit', () => this.#fail(this.#threadError(new Error('it ended'))));
    this.#running = { worker, closed: new Int32Array(closed) };
    return worker;
  }

  #answered({ id, outcomes }: ThreadAnswer): void {
    const waiting = this.#waiting.get(id);
    this.#waiting.delete(id);
    if (this.#waiting.size === 0) this.#running?.worker.unref();
    waiting?.resolve(
      outcomes.map((o) =>
        'error' in o
          ? new EntityGitError(o.error.code, o.error.message.replace(/^\[entity-git\] /, ''), o.error.data)
          : o.update,
      ),
    );
  }

  #threadError(err: unknown): EntityGitError {
    return new EntityGitError(
      'SEARCH_INDEX_ERROR',
      `the search index's write thread failed: ${(err as Error)?.message ?? String(err)}`,
      {},
      { cause: err },
    );
  }

  /** The thread is gone: every batch still waiting rejects, and so does every later one. */
  #fail(err: EntityGitError): void {
    this.#failed ??= err;
    for (const w of this.#waiting.values()) w.reject(err);
    this.#waiting.clear();
  }
}
