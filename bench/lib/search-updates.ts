// The index's update after a turn's sync, as a user's mirror meets it: turns appended to sessions
// with a repository and synced by one long-lived mirror, each sync's result handed to the index.
// What a turn's sync feels is the time its thread spends on the update: the event loop's active
// time from the hand-over until the update is in the index (performance.eventLoopUtilization:
// the wait for the write thread's answer is idle, the post and the answer are not). The update's
// latency (until it is in the index) is reported beside it. Contenders in the same run: the same
// updates recorded on the calling thread (`writeThread: false`), where the two are the same; and,
// for the write thread's, a wait as long as its last answer took with no update at all: the
// garbage a sync leaves is collected (and its other leftovers run) in whatever idle time follows
// it, so part of the thread's figure is the sync's, and the wait measures that part.
import { performance } from 'node:perf_hooks';
import { createNodeMirror } from '../../packages/node-fs/src/index.js';
import type { SearchIndex, SyncDone } from '../../packages/search/src/index.js';
import { openSqlite } from '../../packages/sqlite/src/index.js';
import { ms, ratio, stats } from './measure.js';
import { corpusNodes, corpusSessionId } from './search-corpus.js';

/** The two indexes compared: the same file, updates recorded on the write thread or on the caller's. */
export interface UpdateIndexes {
  thread: SearchIndex;
  calling: SearchIndex;
}

interface Samples {
  sync: number[];
  busy: number[];
  wall: number[];
}

const samples = (): Samples => ({ sync: [], busy: [], wall: [] });

function push(s: Samples, sync: number, t: { busy: number; wall: number }): void {
  s.sync.push(sync);
  s.busy.push(t.busy);
  s.wall.push(t.wall);
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

function summaryOf(t: Samples) {
  return {
    sync: stats(t.sync),
    busy: stats(t.busy),
    wall: stats(t.wall),
    ratio: stats(t.busy.map((b, k) => b / t.sync[k]!)),
    means: { sync: mean(t.sync), busy: mean(t.busy), wall: mean(t.wall) },
  };
}

/** `work`'s time on this thread (the event loop's active time) and its wall time. */
async function timed<T>(work: () => Promise<T>): Promise<{ value: T; busy: number; wall: number }> {
  const t0 = performance.now();
  const e0 = performance.eventLoopUtilization();
  const value = await work();
  const { active } = performance.eventLoopUtilization(e0);
  return { value, busy: active, wall: performance.now() - t0 };
}

interface Run {
  indexes: UpdateIndexes;
  session: (k: number) => number;
  size: number;
  rounds: number;
  fail: (message: string) => never;
  /** A turn appended to session `i` and synced: its result and the sync's time. */
  turn: (i: number) => Promise<{ r: SyncDone; took: number }>;
}

type Kinds = { first: Samples; next: Samples };
const kinds = (): Kinds => ({ first: samples(), next: samples() });

/**
 * `session(k)`, for k below 5 × `size`, names distinct sessions. `one`: 3 × `size` of them, two
 * turns each (the first the session's first sync in the process, the second what a running
 * mirror meets), each result given to `afterSync` (a transaction of its own) and awaited, the
 * sessions taking turns: the write thread's index, the calling thread's, and no update but the
 * wait. `batched`: `rounds` rounds for each index, alternating, of a turn in each of `size` other
 * sessions (the same ones each round of an index: its first round their first syncs), each
 * result queued (`enqueue`, what `attach` does) and the queue flushed once the round's syncs are
 * done, awaited: a turn's share is the enqueue plus the flush over `size`.
 */
export async function measureUpdates(o: Omit<Run, 'turn'> & { db: string; root: string }) {
  const store = await openSqlite({ file: o.db });
  const mirror = createNodeMirror({ dag: store.dag, root: o.root });
  const turn = async (i: number) => {
    const id = corpusSessionId(i);
    let last = 0;
    for await (const n of store.dag.nodesAfter(id, 0)) last = n.seq;
    for (const { seq: _seq, ...n } of corpusNodes(i, 1, last)) await store.writer.appendNode(n);
    const t0 = performance.now();
    const r = await mirror.sync(id);
    const took = performance.now() - t0;
    if (r.commitsWritten !== 1 || r.extendedBranches?.[0]?.messages.length !== 2)
      o.fail(
        `session ${id}: ${r.commitsWritten} commits, ${r.extendedBranches?.[0]?.messages.length} messages carried`,
      );
    return { r: r as SyncDone, took };
  };
  const run: Run = { ...o, turn };
  const one = await measureOne(run);
  const batched = await measureBatched(run, 3 * o.size);
  await store.close();
  const each = (k: Kinds) => ({ first: summaryOf(k.first), next: summaryOf(k.next) });
  return {
    one: { thread: each(one.thread), calling: each(one.calling), wait: each(one.wait) },
    batched: { thread: each(batched.thread), calling: each(batched.calling) },
  };
}

/** Sessions 0 to 3 × `size`: two turns each, updated by `afterSync` on either index, or by none (an idle wait). */
async function measureOne(o: Run) {
  const one = { thread: kinds(), calling: kinds(), wait: kinds() };
  let answered = { first: 2, next: 2 };
  for (let k = 0; k < 3 * o.size; k++) {
    const how = (['thread', 'calling', 'wait'] as const)[k % 3]!;
    for (const which of ['first', 'next'] as const) {
      const { r, took } = await o.turn(o.session(k));
      if (how === 'wait') {
        push(one.wait[which], took, await timed(() => new Promise((done) => setTimeout(done, answered[which]))));
        // The index brought up to date after the measure.
        await o.indexes.calling.afterSync(r);
        continue;
      }
      const t = await timed(() => o.indexes[how].afterSync(r));
      if (t.value.added !== 2) o.fail(`session ${r.sessionId}: ${t.value.added} messages indexed`);
      if (how === 'thread') answered = { ...answered, [which]: t.wall };
      push(one[how][which], took, t);
    }
  }
  return one;
}

/** `rounds` rounds for each index, alternating, of a turn in each of its `size` sessions (from `from` on), queued and flushed. */
async function measureBatched(o: Run, from: number) {
  const batched = { thread: kinds(), calling: kinds() };
  const base = { thread: from, calling: from + o.size };
  for (let n = 0; n < 2 * o.rounds; n++) {
    const how = n % 2 === 0 ? 'thread' : 'calling';
    const index = o.indexes[how];
    const round: { busy: number; wall: number }[] = [];
    const syncs: number[] = [];
    for (let k = 0; k < o.size; k++) {
      const { r, took } = await o.turn(o.session(base[how] + k));
      round.push(await timed(async () => index.enqueue(r, (id, e) => o.fail(`session ${id}: ${e.message}`))));
      syncs.push(took);
    }
    const flush = await timed(() => index.flush());
    if (flush.value.carried !== o.size) o.fail(`${flush.value.read} of ${o.size} queued updates were read`);
    const share = (key: 'busy' | 'wall') => (round.reduce((a, t) => a + t[key], 0) + flush[key]) / o.size;
    for (const took of syncs)
      push(batched[how][n < 2 ? 'first' : 'next'], took, { busy: share('busy'), wall: share('wall') });
  }
  return batched;
}

type Summary = ReturnType<typeof summaryOf>;

/** The lines the search bench prints of {@link measureUpdates}' figures. */
export function updateLines(u: Awaited<ReturnType<typeof measureUpdates>>, size: number, rounds: number): string[] {
  const figures = (t: Summary) =>
    `the sync's thread ${ms(t.busy.median)} ms (${ratio(t.busy.median / t.sync.median)} of the sync; median of the per-turn ratios ${ratio(t.ratio.median)}; mean ${ms(t.means.busy)} ms, ${ratio(t.means.busy / t.means.sync)} of the mean sync)`;
  const line = (name: string, t: Summary, what: string) =>
    `${name}: a turn's sync ${ms(t.sync.median)} ms median (mean ${ms(t.means.sync)}); ${what}: ${figures(t)}, in the index ${ms(t.wall.median)} ms after the hand-over (mean ${ms(t.means.wall)})`;
  const lines: string[] = [];
  const ways = [
    ['its own transaction (afterSync)', u.one],
    [`batched, ${size} turns a flush (enqueue + flush / ${size}; ${rounds - 1} rounds of a running mirror)`, u.batched],
  ] as const;
  const kinds = [
    ["a session's first sync in the process", 'first'],
    ['a running mirror', 'next'],
  ] as const;
  for (const [how, w] of ways)
    for (const [where, byKind] of [
      ['on the write thread', w.thread],
      ['on the calling thread (writeThread: false)', w.calling],
    ] as const)
      for (const [name, kind] of kinds) lines.push(line(name, byKind[kind], `the index update, ${how}, ${where}`));
  for (const [name, kind] of kinds) {
    const t = u.one.wait[kind];
    lines.push(
      `${name}: a turn's sync ${ms(t.sync.median)} ms median; no index update, an idle wait of ${ms(t.wall.median)} ms (as long as the write thread's answer took): ${figures(t)} (garbage the sync left, collected)`,
    );
  }
  return lines;
}
