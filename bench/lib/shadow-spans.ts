// The shadow snapshot's spans (packages/project/src/node/shadow-trace.ts), gathered per snapshot
// and summed up over the rounds: where an after-snapshot's time goes (bench/shadow-snapshot.ts --trace).
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
// Relative imports: bench/ is not a workspace package (see bench/commit.ts).
import { SHADOW_TRACE_CHANNEL, type ShadowSpan } from '../../packages/project/src/node/shadow-trace.js';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

export class SpanRecorder {
  /** One list of spans per snapshot recorded. */
  readonly #snapshots: ShadowSpan[][] = [];
  #current: ShadowSpan[] | null = null;
  readonly #listener = (message: unknown) => this.#current?.push(message as ShadowSpan);

  constructor() {
    subscribe(SHADOW_TRACE_CHANNEL, this.#listener);
  }

  /** Records the spans `work` publishes (one snapshot), when `record` is true. */
  async during<T>(record: boolean, work: () => Promise<T>): Promise<T> {
    if (!record) return work();
    const spans: ShadowSpan[] = [];
    this.#current = spans;
    try {
      return await work();
    } finally {
      this.#current = null;
      this.#snapshots.push(spans);
    }
  }

  close(): void {
    unsubscribe(SHADOW_TRACE_CHANNEL, this.#listener);
  }

  /**
   * Per step, in order of its median start: the median start after the snapshot was called, the
   * median length, and in how many snapshots it ran (a step that ran twice in one is summed).
   */
  summary(): { name: string; startMs: number; ms: number; count: number }[] {
    const steps = new Map<string, { starts: number[]; lengths: number[] }>();
    for (const spans of this.#snapshots) {
      const origin = spans.find((s) => s.name === 'snapshot')?.start ?? Math.min(...spans.map((s) => s.start));
      const here = new Map<string, { start: number; ms: number }>();
      for (const s of spans) {
        const seen = here.get(s.name);
        here.set(s.name, { start: Math.min(seen?.start ?? s.start, s.start), ms: (seen?.ms ?? 0) + s.ms });
      }
      for (const [name, { start, ms }] of here) {
        const step = steps.get(name) ?? { starts: [], lengths: [] };
        step.starts.push(start - origin);
        step.lengths.push(ms);
        steps.set(name, step);
      }
    }
    return [...steps]
      .map(([name, { starts, lengths }]) => ({
        name,
        startMs: median(starts),
        ms: median(lengths),
        count: lengths.length,
      }))
      .sort((a, b) => a.startMs - b.startMs || b.ms - a.ms);
  }
}
