import type { EntityGitError } from '@entity-git/git';
import type { SyncDone } from './search-types.js';

/** Where a queued update's failure goes. */
export type OnIndexError = (sessionId: string, error: EntityGitError) => void;

/** A sync's result waiting for the index, and who hears of its failure. */
export interface QueuedUpdate {
  result: SyncDone;
  onError: OnIndexError | undefined;
}

/** What one flush did: updates applied from what their results carried, and read from their repository. */
export interface FlushCount {
  carried: number;
  read: number;
}

/** How a {@link UpdateQueue} applies what it took. */
export interface QueueWork {
  /** The updates that carry their messages, in one transaction; resolves to those left to read from their repository. */
  applyCarried(batch: readonly QueuedUpdate[]): Promise<QueuedUpdate[]>;
  /** One update read from its repository (its failure reported to its `onError`). */
  read(update: QueuedUpdate): Promise<void>;
}

/**
 * The updates of several syncs, applied together: queued off the sync's path, flushed `lagMs`
 * after the first of a batch was queued (or at once past `max` queued), in order, so the
 * transaction, its write-ahead log commit and FTS5's segment are paid once for the batch.
 */
export class UpdateQueue {
  readonly #work: QueueWork;
  readonly #lagMs: number;
  readonly #max: number;
  #queued: QueuedUpdate[] = [];
  #timer: ReturnType<typeof setTimeout> | null = null;
  #done: Promise<void> = Promise.resolve();

  constructor(work: QueueWork, lagMs: number, max: number) {
    this.#work = work;
    this.#lagMs = lagMs;
    this.#max = max;
  }

  push(update: QueuedUpdate): void {
    this.#queued.push(update);
    if (this.#queued.length >= this.#max) void this.flush();
    else if (this.#timer === null) {
      this.#timer = setTimeout(() => void this.flush(), this.#lagMs);
      // A pending batch does not keep a process alive; `settle` before exiting applies it.
      this.#timer.unref?.();
    }
  }

  /**
   * Applies everything queued so far; resolves once it (and every earlier flush) is done, with
   * how many of its updates were applied from what they carried and how many were read from
   * their repository. Never rejects.
   */
  flush(): Promise<FlushCount> {
    const batch = this.take();
    const count = { carried: 0, read: 0 };
    if (batch.length > 0) {
      this.#done = this.#done.then(async () => {
        const left = await this.#work.applyCarried(batch);
        count.carried = batch.length - left.length;
        count.read = left.length;
        for (const u of left) await this.#work.read(u);
      });
    }
    return this.#done.then(() => count);
  }

  /** Everything queued and not flushed yet, taken out of the queue (at close). */
  take(): QueuedUpdate[] {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    return this.#queued.splice(0);
  }
}
