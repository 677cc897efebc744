import { EntityGitError, type ErrorCode } from '@entity-git/git';
import type { SyncResult } from '../mirror/mirror.js';
import { pushSession, type PushResult, type RemoteTarget } from './push.js';
import { defineRemote } from './remote.js';
import { isRetryable } from './transport.js';
import type { Logger } from '../observe/logger.js';
import { logPushEvent } from '../observe/observed.js';

export interface PushSchedulerOptions extends RemoteTarget {
  /** Where each push event is reported (`push.<event>`; failures at error). Default: none. */
  logger?: Logger;
  /**
   * How long a session waits after its first push request before it is pushed; requests
   * meanwhile join it, so a busy session is pushed at most once per delay. Default 2000 ms.
   */
  delayMs?: number;
  /** Pushes running at once, over all sessions. Default 2. */
  concurrency?: number;
  /** Attempts per push before `failed`. Default 8. */
  attempts?: number;
  /** First retry delay; doubles per attempt up to `maxDelayMs`. Default 1000 ms. */
  baseDelayMs?: number;
  /** Default 60 000 ms. */
  maxDelayMs?: number;
  /** Push with `force` (this machine's branches win over diverged ones on the host). Default false. */
  force?: boolean;
}

export interface PushSchedulerEvents {
  /** A push finished (possibly with nothing to send). */
  pushed: { sessionId: string; result: PushResult };
  /** A push failed and will be tried again after `delayMs`. */
  retrying: { sessionId: string; error: EntityGitError; attempt: number; delayMs: number };
  /**
   * A push failed for good: an error another try cannot fix (`REMOTE_AUTH`, `REMOTE_NOT_FOUND`,
   * `REMOTE_REJECTED`, …) or out of attempts. The next `schedule` starts over.
   */
  failed: { sessionId: string; error: EntityGitError; attempts: number };
}

export type PushSchedulerEventName = keyof PushSchedulerEvents;

export interface PushSessionStatus {
  sessionId: string;
  /** `waiting`: in its delay; `queued`: for a free slot; `running`; `backoff`: before a retry. */
  state: 'waiting' | 'queued' | 'running' | 'backoff';
  /** Another push was asked for while this one runs; it follows after the delay. */
  again: boolean;
  attempts: number;
  lastError: { code: ErrorCode; message: string; at: number } | null;
}

/**
 * Pushes in the background, off the turn's path. Plug it into the mirror service:
 * `createMirrorService({ mirror, afterSync: pushes.afterSync })` — every sync that wrote
 * something schedules a push of that session and returns at once.
 */
export interface PushScheduler {
  /** Ask for a push of `sessionId`; returns at once, never throws. Coalesces per session. */
  schedule(sessionId: string): void;
  /**
   * For `MirrorServiceOptions.afterSync`: schedules a push when the sync wrote anything and
   * resolves at once (a push never holds up the sync queue). Compose it with another hook by
   * calling it first: `afterSync: async (id, r) => { pushes.afterSync(id, r); return other(id, r); }`.
   */
  readonly afterSync: (sessionId: string, result: SyncResult) => Promise<void>;
  /** Listen to an event; returns the function that stops listening. */
  on<E extends PushSchedulerEventName>(event: E, listener: (payload: PushSchedulerEvents[E]) => void): () => void;
  /** Start every waiting push now (delays and backoffs cut short), then resolve when all are done. */
  flush(): Promise<void>;
  /** Resolves when nothing is waiting, queued, running or backing off. */
  drain(): Promise<void>;
  /** The sessions with pushes in flight. */
  status(): PushSessionStatus[];
  /** Stop accepting requests, push what is pending once more (no further retries), and resolve. */
  close(): Promise<void>;
}

interface Slot {
  status: PushSessionStatus;
  timer: unknown;
}

export function createPushScheduler(options: PushSchedulerOptions): PushScheduler {
  const remote = defineRemote(options.remote);
  const delayMs = Math.max(0, options.delayMs ?? 2000);
  const concurrency = Math.max(1, options.concurrency ?? 2);
  const maxAttempts = Math.max(1, options.attempts ?? 8);
  const baseDelay = options.baseDelayMs ?? 1000;
  const maxDelay = options.maxDelayMs ?? 60_000;
  const slots = new Map<string, Slot>();
  const queue: string[] = [];
  const listeners: { [E in PushSchedulerEventName]: Set<(p: PushSchedulerEvents[E]) => void> } = {
    pushed: new Set(),
    retrying: new Set(),
    failed: new Set(),
  };
  let running = 0;
  let closed = false;
  let idleWaiters: Array<() => void> = [];

  const emit = <E extends PushSchedulerEventName>(event: E, payload: PushSchedulerEvents[E]) => {
    logPushEvent(options.logger, event, payload);
    for (const l of listeners[event]) {
      try {
        (l as (p: PushSchedulerEvents[E]) => void)(payload);
      } catch {
        // a listener cannot break the scheduler
      }
    }
  };
  const settle = () => {
    if (slots.size > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const w of waiters) w();
  };
  const unref = (t: unknown) => (t as { unref?: () => void } | null)?.unref?.();

  const wait = (slot: Slot, state: 'waiting' | 'backoff', ms: number) => {
    slot.status.state = state;
    slot.timer = setTimeout(() => {
      slot.timer = null;
      enqueue(slot);
    }, ms);
    // A pending push does not keep a Node process alive; `close()` pushes it at shutdown.
    unref(slot.timer);
  };
  const enqueue = (slot: Slot) => {
    if (slot.timer !== null) {
      clearTimeout(slot.timer as never);
      slot.timer = null;
    }
    if (slot.status.state === 'queued' || slot.status.state === 'running') return;
    slot.status.state = 'queued';
    queue.push(slot.status.sessionId);
    pump();
  };
  const pump = () => {
    while (running < concurrency && queue.length > 0) {
      const sessionId = queue.shift()!;
      const slot = slots.get(sessionId);
      if (slot) void run(slot);
    }
  };

  const run = async (slot: Slot): Promise<void> => {
    const { sessionId } = slot.status;
    running++;
    slot.status.state = 'running';
    slot.status.again = false;
    slot.status.attempts++;
    try {
      const pushOptions = {
        remote,
        storage: options.storage,
        root: options.root,
        sessionId,
        force: options.force === true,
        ...(options.lockTimeoutMs !== undefined ? { lockTimeoutMs: options.lockTimeoutMs } : {}),
      };
      const result = await pushSession(pushOptions);
      slot.status.attempts = 0;
      slot.status.lastError = null;
      emit('pushed', { sessionId, result });
      finish(slot);
    } catch (err) {
      const error =
        err instanceof EntityGitError
          ? err
          : new EntityGitError(
              'REMOTE_ERROR',
              `push of session ${JSON.stringify(sessionId)}: ${(err as Error)?.message ?? String(err)}`,
              { sessionId, retryable: true },
              { cause: err },
            );
      slot.status.lastError = { code: error.code, message: error.message, at: Date.now() };
      const attempts = slot.status.attempts;
      if (!closed && isRetryable(error) && attempts < maxAttempts) {
        const delay = Math.min(maxDelay, baseDelay * 2 ** (attempts - 1));
        emit('retrying', { sessionId, error, attempt: attempts, delayMs: delay });
        wait(slot, 'backoff', delay);
      } else {
        slot.status.attempts = 0;
        emit('failed', { sessionId, error, attempts });
        finish(slot);
      }
    } finally {
      running--;
      pump();
      settle();
    }
  };
  const finish = (slot: Slot) => {
    if (slot.status.again && !closed) {
      wait(slot, 'waiting', delayMs);
      return;
    }
    slots.delete(slot.status.sessionId);
  };

  const schedule = (sessionId: string) => {
    if (closed || typeof sessionId !== 'string' || sessionId === '') return;
    const slot = slots.get(sessionId);
    if (slot) {
      // waiting/queued/backoff: the push to come reads the refs when it runs, so it carries this.
      if (slot.status.state === 'running') slot.status.again = true;
      return;
    }
    const fresh: Slot = {
      status: { sessionId, state: 'waiting', again: false, attempts: 0, lastError: null },
      timer: null,
    };
    slots.set(sessionId, fresh);
    wait(fresh, 'waiting', delayMs);
  };

  const drain = () =>
    slots.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve));
  const flush = async () => {
    for (const slot of slots.values())
      if (slot.status.state === 'waiting' || slot.status.state === 'backoff') enqueue(slot);
    await drain();
  };

  return Object.freeze({
    schedule,
    afterSync: async (sessionId: string, result: SyncResult) => {
      if (!result.noop) schedule(sessionId);
    },
    on<E extends PushSchedulerEventName>(event: E, listener: (payload: PushSchedulerEvents[E]) => void) {
      listeners[event].add(listener as never);
      return () => {
        listeners[event].delete(listener as never);
      };
    },
    flush,
    drain,
    status: () =>
      [...slots.values()].map((s) => ({ ...s.status, lastError: s.status.lastError && { ...s.status.lastError } })),
    async close() {
      closed = true;
      await flush();
    },
  });
}
