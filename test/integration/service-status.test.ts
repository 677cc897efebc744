import {
  createMirror,
  createMirrorService,
  MemoryDag,
  type DagSource,
  type ServiceEvents,
  type SessionStatus,
} from '@entity-git/core';
import { createNodeMirror, nodeStorage } from '@entity-git/node-fs';
import { faultyStorage, writeGolden } from '@entity-git/test-utils';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { git, patched, tempDir } from '../../packages/node-fs/test/helpers.js';

const A = 'sess-a';
const B = 'sess-b';

/** HEAD's commit after an undisturbed sync of the golden DAG under `sessionId` (ids depend on the session id). */
const references = new Map<string, Promise<string>>();
function referenceHead(sessionId: string): Promise<string> {
  if (!references.has(sessionId)) {
    references.set(
      sessionId,
      (async () => {
        const dag = new MemoryDag();
        await writeGolden(dag, { sessionId });
        const mirror = createNodeMirror({ dag, root: tempDir('eg-status-ref-') });
        await mirror.sync(sessionId);
        return git(mirror.repoPath(sessionId), 'rev-parse', 'HEAD').trim();
      })(),
    );
  }
  return references.get(sessionId)!;
}

async function goldenDag(...ids: string[]): Promise<MemoryDag> {
  const dag = new MemoryDag();
  for (const sessionId of ids) await writeGolden(dag, { sessionId });
  return dag;
}

const tick = () => new Promise<void>((r) => setImmediate(r));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A DagSource whose getSession (read by every sync, inside the sync) waits for the session's gate. */
function gatedDag(inner: DagSource) {
  const gates = new Map<string, ReturnType<typeof deferred>>();
  const entered = new Map<string, ReturnType<typeof deferred>>();
  const gateOf = (id: string) => (gates.has(id) ? gates.get(id)! : (gates.set(id, deferred()), gates.get(id)!));
  const enteredOf = (id: string) =>
    entered.has(id) ? entered.get(id)! : (entered.set(id, deferred()), entered.get(id)!);
  const dag: DagSource = {
    listSessions: () => inner.listSessions(),
    getSession: async (id) => {
      enteredOf(id).resolve();
      await gateOf(id).promise;
      return inner.getSession(id);
    },
    nodesAfter: (id, after, o) => inner.nodesAfter(id, after, o),
    getHead: (id) => inner.getHead(id),
  };
  return { dag, release: (id: string) => gateOf(id).resolve(), entered: (id: string) => enteredOf(id).promise };
}

const stateOf = (service: ReturnType<typeof createMirrorService>, id: string): SessionStatus['state'] | undefined =>
  service.status().sessions.find((s) => s.sessionId === id)?.state;

describe('service.status() observed mid-run', () => {
  it('shows a session queued, then running while its sync is inside the DAG read, then idle', async () => {
    const golden = await goldenDag(A, B);
    const gated = gatedDag(golden);
    const mirror = createNodeMirror({ dag: gated.dag, root: tempDir('eg-status-') });
    // One slot: B waits in the queue while A's sync is held.
    const service = createMirrorService({ mirror, concurrency: 1 });
    expect(service.status()).toMatchObject({ queued: 0, running: 0, backoff: 0, sessions: [] });

    service.notify(A);
    service.notify(B);
    expect(stateOf(service, A)).toBe('queued');
    expect(stateOf(service, B)).toBe('queued');
    expect(service.status()).toMatchObject({ queued: 2, running: 0 });

    await gated.entered(A);
    expect(stateOf(service, A)).toBe('running');
    expect(stateOf(service, B)).toBe('queued');
    expect(service.status()).toMatchObject({ queued: 1, running: 1, backoff: 0 });
    // Held for a while: nothing moves until the gate opens.
    await sleep(50);
    expect(stateOf(service, A)).toBe('running');
    expect(stateOf(service, B)).toBe('queued');

    // A call while A runs asks for one more sync after it.
    service.notify(A);
    expect(service.status().sessions.find((s) => s.sessionId === A)).toMatchObject({ state: 'running', again: true });

    gated.release(A);
    await gated.entered(B);
    expect(stateOf(service, B)).toBe('running');
    // A's second sync waits for the single slot behind B.
    expect(stateOf(service, A)).toBe('queued');
    gated.release(B);
    await service.drain();
    expect(service.status()).toMatchObject({ queued: 0, running: 0, backoff: 0 });
    for (const id of [A, B]) {
      expect(service.status().sessions.find((s) => s.sessionId === id)).toMatchObject({
        state: 'idle',
        again: false,
        attempts: 0,
        lastError: null,
      });
      expect(git(mirror.repoPath(id), 'rev-parse', 'HEAD').trim()).toBe(await referenceHead(id));
    }
  });

  it('shows backoff (with the attempt and the error) while a failed sync waits to retry, then idle after the retry succeeds', async () => {
    const dag = await goldenDag(A);
    const storage = faultyStorage(nodeStorage());
    const mirror = createMirror({ dag, storage, root: tempDir('eg-status-') });
    const service = createMirrorService({ mirror, concurrency: 1, attempts: 3, baseDelayMs: 1000 });
    const retrying: ServiceEvents['retrying'][] = [];
    const committed: string[] = [];
    service.on('committed', (e) => committed.push(e.sessionId));
    const firstRetry = new Promise<void>((resolve) => service.on('retrying', (e) => (retrying.push(e), resolve())));

    storage.failNext(1);
    service.notify(A);
    await firstRetry;
    await tick();
    const during = service.status();
    expect(during).toMatchObject({ queued: 0, running: 0, backoff: 1 });
    expect(during.sessions).toEqual([
      expect.objectContaining({
        sessionId: A,
        state: 'backoff',
        attempts: 1,
        lastError: expect.objectContaining({ code: 'STORAGE_ERROR' }),
      }),
    ]);
    expect(committed).toEqual([]);
    // A notify during the backoff does not start a sync early.
    service.notify(A);
    await sleep(50);
    expect(stateOf(service, A)).toBe('backoff');

    await service.drain();
    expect(retrying.map((e) => [e.attempt, e.delayMs, e.error.code])).toEqual([[1, 1000, 'STORAGE_ERROR']]);
    expect(committed).toEqual([A]);
    expect(service.status().sessions).toEqual([
      expect.objectContaining({ sessionId: A, state: 'idle', attempts: 0, lastError: null }),
    ]);
    expect(git(mirror.repoPath(A), 'rev-parse', 'HEAD').trim()).toBe(await referenceHead(A));
  });
});

describe('retry delays', () => {
  it('double from baseDelayMs per attempt and are capped at maxDelayMs; each is waited out', async () => {
    const dag = await goldenDag(A);
    const storage = faultyStorage(nodeStorage());
    const inner = createMirror({ dag, storage, root: tempDir('eg-status-') });
    const starts: number[] = [];
    const mirror = patched(inner, {
      sync: (id, o) => (starts.push(performance.now()), inner.sync(id, o)),
    });
    const service = createMirrorService({ mirror, attempts: 7, baseDelayMs: 10, maxDelayMs: 45 });
    const retrying: Array<ServiceEvents['retrying'] & { at: number }> = [];
    const failed: ServiceEvents['failed'][] = [];
    service.on('retrying', (e) => retrying.push({ ...e, at: performance.now() }));
    service.on('failed', (e) => failed.push(e));

    storage.failNext(1_000_000);
    service.notify(A);
    await service.drain();
    expect(retrying.map((e) => [e.attempt, e.delayMs])).toEqual([
      [1, 10],
      [2, 20],
      [3, 40],
      [4, 45],
      [5, 45],
      [6, 45],
    ]);
    expect(retrying.every((e) => e.sessionId === A && e.error.code === 'STORAGE_ERROR')).toBe(true);
    expect(failed.map((e) => [e.sessionId, e.attempts, e.error.code])).toEqual([[A, 7, 'STORAGE_ERROR']]);
    // Every retry starts no earlier than its announced delay (timers may fire a ms early).
    expect(starts).toHaveLength(7);
    for (let i = 0; i < retrying.length; i++)
      expect(starts[i + 1]! - retrying[i]!.at).toBeGreaterThanOrEqual(retrying[i]!.delayMs - 2);
  });

  it('use the defaults of 200 ms doubling when no option is given', async () => {
    const dag = await goldenDag(A);
    const storage = faultyStorage(nodeStorage());
    const mirror = createMirror({ dag, storage, root: tempDir('eg-status-') });
    const service = createMirrorService({ mirror, attempts: 3 });
    const delays: number[] = [];
    service.on('retrying', (e) => delays.push(e.delayMs));
    storage.failNext(1_000_000);
    service.notify(A);
    await service.drain();
    expect(delays).toEqual([200, 400]);
  });
});

describe('concurrency', () => {
  it('runs two sessions at once, but never two syncs of one session', async () => {
    const golden = await goldenDag(A, B);
    const inner = createNodeMirror({ dag: golden, root: tempDir('eg-status-') });
    type Span = { id: string; start: number; end: number };
    const spans: Span[] = [];
    const gateA = deferred();
    let syncsOfA = 0;
    const mirror = patched(inner, {
      sync: async (id, o) => {
        const span = { id, start: performance.now(), end: Infinity };
        spans.push(span);
        try {
          // A's first sync is held until B's has started and A has been notified again and again.
          if (id === A && syncsOfA++ === 0) await gateA.promise;
          await sleep(20);
          return await inner.sync(id, o);
        } finally {
          span.end = performance.now();
        }
      },
    });
    const service = createMirrorService({ mirror, concurrency: 2 });
    service.notify(A);
    service.notify(B);
    await sleep(10);
    for (let i = 0; i < 5; i++) {
      service.notify(A);
      await sleep(5);
    }
    gateA.resolve();
    await service.drain();

    const of = (id: string) => spans.filter((s) => s.id === id);
    // The calls made while A ran coalesced into exactly one more sync.
    expect(of(A)).toHaveLength(2);
    expect(of(B)).toHaveLength(1);
    // One session's syncs never overlap: each starts after the previous one ended.
    const [a1, a2] = of(A) as [Span, Span];
    expect(a2.start).toBeGreaterThanOrEqual(a1.end);
    // Two sessions' syncs do overlap in time.
    const [b1] = of(B) as [Span];
    expect(b1.start < a1.end && a1.start < b1.end).toBe(true);
    for (const id of [A, B]) expect(git(inner.repoPath(id), 'rev-parse', 'HEAD').trim()).toBe(await referenceHead(id));
  });

  it('with concurrency 1, two sessions never overlap either', async () => {
    const golden = await goldenDag(A, B);
    const inner = createNodeMirror({ dag: golden, root: tempDir('eg-status-') });
    let inFlight = 0;
    let maxInFlight = 0;
    const mirror = patched(inner, {
      sync: async (id, o) => {
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        try {
          await sleep(20);
          return await inner.sync(id, o);
        } finally {
          inFlight--;
        }
      },
    });
    const service = createMirrorService({ mirror, concurrency: 1 });
    service.notify(A);
    service.notify(B);
    await service.drain();
    expect(maxInFlight).toBe(1);
    for (const id of [A, B]) expect(git(inner.repoPath(id), 'rev-parse', 'HEAD').trim()).toBe(await referenceHead(id));
  });
});
