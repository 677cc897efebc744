// A long sync runs in the caller's process (a dispatcher, a server, a page). Its loops are made of
// promises that settle at once (an in-memory DagSource, objects written into a pack being built),
// which the event loop sees as one task: a 2,000-turn backfill held it for seconds. These helpers
// give the host a macrotask turn (timers, I/O, rendering) every few milliseconds of work.

/** Work between two yields to the host, in ms, when the caller does not say (`yieldEveryMs`). */
export const DEFAULT_YIELD_EVERY_MS = 4;

type Scheduler = (resume: () => void) => void;

const g = globalThis as unknown as {
  setImmediate?: (fn: () => void) => unknown;
  MessageChannel?: new () => {
    port1: { onmessage: (() => void) | null; close(): void };
    port2: { postMessage(v: unknown): void; close(): void };
  };
  performance?: { now(): number };
  setTimeout: (fn: () => void, ms?: number) => unknown;
};

// Node: setImmediate runs after the pending I/O and timers. Browsers: a MessageChannel message is
// a macrotask without setTimeout's 4 ms clamp on nested calls.
const schedule: Scheduler =
  typeof g.setImmediate === 'function'
    ? (resume) => void g.setImmediate!(resume)
    : typeof g.MessageChannel === 'function'
      ? (resume) => {
          const channel = new g.MessageChannel!();
          channel.port1.onmessage = () => {
            channel.port1.close();
            resume();
          };
          channel.port2.postMessage(null);
        }
      : (resume) => void g.setTimeout(resume, 0);

const now: () => number = g.performance ? () => g.performance!.now() : () => Date.now();

/** One macrotask turn of the event loop. */
export function yieldToHost(): Promise<void> {
  return new Promise((resolve) => schedule(resolve));
}

/**
 * Counts the time since the host last had a turn. `due()` answers a promise to await once
 * `everyMs` have passed, and `undefined` before (the hot loop pays a clock read).
 * `everyMs` 0 never yields.
 */
export class HostYield {
  private last = now();
  constructor(private readonly everyMs: number) {}

  due(): Promise<void> | undefined {
    if (this.everyMs <= 0) return undefined;
    const t = now();
    if (t - this.last < this.everyMs) return undefined;
    return yieldToHost().then(() => {
      this.last = now();
    });
  }
}
