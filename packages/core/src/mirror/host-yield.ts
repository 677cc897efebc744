// A long sync runs in the caller's process (a dispatcher, a server, a page). Its loops are made of
// promises that settle at once (an in-memory DagSource, objects written into a pack being built),
// which the event loop sees as one task: a 2,000-turn backfill held it for seconds. These helpers
// give the host a macrotask turn (timers, I/O, rendering) every few milliseconds of work.

/**
 * Work between two yields to the host, in ms, when the caller does not say (`yieldEveryMs`). 1:
 * the host waits for the time since its last turn plus the step that passes the budget, and a
 * garbage collection lands on top of that, so the budget is small: larger budgets left a backfill's worst
 * host waits above the event-loop bench's goal (`bench/event-loop.ts`; BENCHMARKS.md, "event-loop").
 */
export const DEFAULT_YIELD_EVERY_MS = 1;

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

/**
 * When the host last had a turn that one of these yields gave it. One clock for the whole thread:
 * the phases of a sync, the syncs of a reconcile and the steps of a long computation each check
 * it, so work that is short in each of them still gives the host a turn every `everyMs` in all.
 */
let lastTurn = now();

/** One macrotask turn of the event loop. */
export function yieldToHost(): Promise<void> {
  return new Promise<void>((resolve) => schedule(resolve)).then(() => {
    lastTurn = now();
  });
}

/**
 * A long synchronous computation cut into steps: a generator that `yield`s between two steps
 * (where the host may have a turn) and returns its result. {@link runSteps} runs it in one go,
 * {@link HostYield.run} gives the host a turn between steps when one is due.
 */
export type Steps<T> = Generator<void, T, void>;

/** Run `steps` to their end at once (no turn for the host): the synchronous form. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * Counts the time since the host last had a turn. `due()` answers a promise to await once
 * `everyMs` have passed, and `undefined` before (the hot loop pays a clock read).
 * `everyMs` 0 never yields.
 */
export class HostYield {
  constructor(private readonly everyMs: number) {}

  due(): Promise<void> | undefined {
    return this.owed() ? yieldToHost() : undefined;
  }

  /**
   * Whether `everyMs` have passed since the host's last turn (never with `everyMs` 0). A loop
   * over every node checks this and awaits {@link yieldToHost} only then: awaiting `due()`'s
   * `undefined` costs a promise and a microtask each time round.
   */
  owed(): boolean {
    return this.everyMs > 0 && now() - lastTurn >= this.everyMs;
  }

  /** Run `steps` to their end, giving the host a turn between two steps when one is due. */
  async run<T>(steps: Steps<T>): Promise<T> {
    if (this.everyMs <= 0) return runSteps(steps);
    for (;;) {
      const r = steps.next();
      if (r.done) return r.value;
      const turn = this.due();
      if (turn) await turn;
    }
  }
}
