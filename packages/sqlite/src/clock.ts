/**
 * A clock for default `created_at`s that never gives one value twice in a process. Sessions and
 * projects list in `created_at` order, which is all a row has to tell creation order by; two rows
 * made in one millisecond would otherwise come back in id order. The step is a microsecond, which
 * a double still resolves at today's epoch seconds.
 */
export function strictlyIncreasing(now: () => number): () => number {
  let last = Number.NEGATIVE_INFINITY;
  return () => {
    last = Math.max(now(), last + 1e-6);
    return last;
  };
}
