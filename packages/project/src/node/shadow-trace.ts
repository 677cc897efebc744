// Where a shadow snapshot's time goes: each step publishes a span on a diagnostics channel, which
// costs one `hasSubscribers` check when nobody listens (bench/shadow-snapshot.ts --trace listens).
// Steps run at once, so spans overlap: a span is its step's start and length, not a share.
import { channel } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';

/** The channel's name, for `diagnostics_channel.subscribe`. */
export const SHADOW_TRACE_CHANNEL = 'entity-git:shadow-snapshot';

/** One step of a snapshot: `start` on `performance.now()`'s clock, both in milliseconds. */
export interface ShadowSpan {
  readonly name: string;
  readonly start: number;
  readonly ms: number;
}

const spans = channel(SHADOW_TRACE_CHANNEL);

/** Runs `work`, publishing how long it took under `name` when someone listens. */
export async function traced<T>(name: string, work: () => Promise<T>): Promise<T> {
  if (!spans.hasSubscribers) return work();
  const start = performance.now();
  try {
    return await work();
  } finally {
    spans.publish({ name, start, ms: performance.now() - start } satisfies ShadowSpan);
  }
}
