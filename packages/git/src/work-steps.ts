// A long computation as a generator that `yield`s between two steps: run in one go, or with a
// caller's pause between steps (how the mirror gives its host's event loop a turn).

/** Steps of a computation that returns `T`. */
export type WorkSteps<T> = Generator<void, T, void>;

/** Run `steps` to their end at once. */
export function runAll<T>(steps: WorkSteps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * Run `steps` to their end, asking `pause` after each step and awaiting it when it answers a
 * promise (it answers undefined when no pause is due: the step after it follows at once).
 */
export async function runPaused<T>(steps: WorkSteps<T>, pause: () => Promise<void> | undefined): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    const p = pause();
    if (p) await p;
  }
}
