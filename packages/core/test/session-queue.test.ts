import { describe, expect, it } from 'vitest';
import { EntityGitError } from '@entity-git/git';
import {
  createSessionQueue,
  type QueueEvents,
  type QueueStatus,
  type SessionQueueOptions,
} from '../src/service/session-queue.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

type Event = [keyof QueueEvents, string, number, number?];

/** A queue whose runs are scripted: `outcomes[sessionId]` says, run by run, 'ok', 'fail' or 'permanent'. */
function scripted(overrides: Partial<SessionQueueOptions<QueueStatus>> = {}) {
  const outcomes = new Map<string, string[]>();
  const runs: string[] = [];
  const events: Event[] = [];
  let active = 0;
  let maxActive = 0;
  const gates = new Map<string, Promise<void>>();
  /** Each session's status after each run, once its next state is set. */
  const after: QueueStatus[] = [];
  const queue = createSessionQueue<QueueStatus>({
    concurrency: 2,
    attempts: 3,
    baseDelayMs: 10,
    maxDelayMs: 15,
    delayMs: null,
    keepIdle: true,
    deferStart: true,
    unrefTimers: false,
    lastRunOnClose: false,
    status: (sessionId) => ({ sessionId, state: 'idle', again: false, attempts: 0, lastError: null }),
    async run(status) {
      runs.push(status.sessionId);
      active++;
      maxActive = Math.max(maxActive, active);
      try {
        await (gates.get(status.sessionId) ?? sleep(1));
        const next = outcomes.get(status.sessionId)?.shift() ?? 'ok';
        if (next === 'fail') throw new Error('disk hiccup');
        if (next === 'permanent') throw new EntityGitError('INVALID_NODE', 'bad node');
      } finally {
        active--;
      }
    },
    toError: (err) =>
      err instanceof EntityGitError ? err : new EntityGitError('STORAGE_ERROR', (err as Error).message),
    retryable: (e) => e.code !== 'INVALID_NODE',
    emit: (event, p) =>
      events.push(
        event === 'retrying'
          ? [event, p.sessionId, (p as QueueEvents['retrying']).attempt, (p as QueueEvents['retrying']).delayMs]
          : [event, p.sessionId, (p as QueueEvents['failed']).attempts],
      ),
    afterRun: (status) => after.push({ ...status }),
    ...overrides,
  });
  return { queue, outcomes, runs, events, gates, after, maxActive: () => maxActive };
}

describe('the per-session queue', () => {
  it('coalesces the requests made in one go into one run, and one made while it runs into one more', async () => {
    const { queue, runs, gates } = scripted();
    let open!: () => void;
    gates.set(
      'a',
      new Promise((r) => {
        open = r;
      }),
    );
    queue.request('a');
    queue.request('a');
    expect(queue.get('a')?.state).toBe('queued');
    queue.request('a');
    await sleep(1);
    expect(queue.get('a')).toMatchObject({ state: 'running', again: false, attempts: 1 });
    queue.request('a');
    queue.request('a');
    expect(queue.get('a')?.again).toBe(true);
    gates.delete('a');
    open();
    await queue.drain();
    expect(runs).toEqual(['a', 'a']);
    expect(queue.statuses()).toEqual([{ sessionId: 'a', state: 'idle', again: false, attempts: 0, lastError: null }]);
  });

  it('retries with a doubling backoff capped at maxDelayMs, then clears the error on success', async () => {
    const { queue, outcomes, events, runs, after } = scripted({ attempts: 5 });
    outcomes.set('a', ['fail', 'fail', 'fail', 'ok']);
    queue.request('a');
    await queue.drain();
    expect(after.map((s) => [s.state, s.attempts, s.lastError?.code ?? null])).toEqual([
      ['backoff', 1, 'STORAGE_ERROR'],
      ['backoff', 2, 'STORAGE_ERROR'],
      ['backoff', 3, 'STORAGE_ERROR'],
      ['idle', 0, null],
    ]);
    expect(events).toEqual([
      ['retrying', 'a', 1, 10],
      ['retrying', 'a', 2, 15],
      ['retrying', 'a', 3, 15],
    ]);
    expect(runs).toHaveLength(4);
    expect(queue.get('a')).toMatchObject({ state: 'idle', attempts: 0, lastError: null });
  });

  it('fails at once on an error another attempt cannot fix, and after the last attempt', async () => {
    const { queue, outcomes, events } = scripted();
    outcomes.set('a', ['permanent']);
    outcomes.set('b', ['fail', 'fail', 'fail']);
    queue.request('a');
    queue.request('b');
    await queue.drain();
    expect(events).toEqual([
      ['failed', 'a', 1],
      ['retrying', 'b', 1, 10],
      ['retrying', 'b', 2, 15],
      ['failed', 'b', 3],
    ]);
    expect(queue.get('a')).toMatchObject({ state: 'idle', attempts: 0, lastError: { code: 'INVALID_NODE' } });
  });

  it('runs at most `concurrency` sessions at once, never one session twice', async () => {
    const { queue, runs, maxActive } = scripted();
    for (const id of ['a', 'b', 'c', 'd', 'a', 'b']) queue.request(id);
    await queue.drain();
    expect(maxActive()).toBe(2);
    expect([...runs].sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('with a delay: waits before queueing, forgets a finished session, and after close runs each once more', async () => {
    const { queue, outcomes, events, runs } = scripted({
      delayMs: 20,
      keepIdle: false,
      lastRunOnClose: true,
      baseDelayMs: 1000,
      maxDelayMs: 60_000,
    });
    queue.request('a');
    queue.request('a');
    expect(queue.statuses()).toEqual([
      { sessionId: 'a', state: 'waiting', again: false, attempts: 0, lastError: null },
    ]);
    await queue.drain();
    expect(runs).toEqual(['a']);
    expect(queue.statuses()).toEqual([]);

    outcomes.set('b', ['fail', 'fail']);
    queue.request('b');
    queue.flush();
    while (queue.get('b')?.state !== 'backoff') await sleep(1);
    queue.close();
    queue.request('c');
    queue.flush();
    await queue.drain();
    expect(runs).toEqual(['a', 'b', 'b']);
    expect(events).toEqual([
      ['retrying', 'b', 1, 1000],
      ['failed', 'b', 2],
    ]);
    expect(queue.statuses()).toEqual([]);
  });
});
