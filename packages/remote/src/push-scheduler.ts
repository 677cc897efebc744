import { emitLog, type LogFields, type Logger, type SyncResult } from '@entity-git/core';
import { createEmitter, createSessionQueue } from '@entity-git/core/session-queue';
import { type EntityGitError, type ErrorCode, normaliseError } from '@entity-git/git';
import { pushSession, type PushResult } from './push.js';
import { defineRemote } from './remote.js';
import type { RemoteTarget } from './target.js';
import { isRetryable } from './transport-error.js';

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

export function createPushScheduler(options: PushSchedulerOptions): PushScheduler {
  const remote = defineRemote(options.remote);
  const events = createEmitter<PushSchedulerEvents>((event, payload) => logPushEvent(options.logger, event, payload));

  const queue = createSessionQueue<PushSessionStatus>({
    concurrency: Math.max(1, options.concurrency ?? 2),
    attempts: Math.max(1, options.attempts ?? 8),
    baseDelayMs: options.baseDelayMs ?? 1000,
    maxDelayMs: options.maxDelayMs ?? 60_000,
    delayMs: Math.max(0, options.delayMs ?? 2000),
    keepIdle: false,
    deferStart: false,
    // A pending push does not keep a Node process alive; `close()` pushes it at shutdown.
    unrefTimers: true,
    lastRunOnClose: true,
    status: (sessionId) => ({ sessionId, state: 'waiting', again: false, attempts: 0, lastError: null }),
    async run({ sessionId }, succeeded) {
      const { storage, root, lock } = options;
      const force = options.force === true;
      const result = await pushSession({ remote, storage, root, lock, sessionId, force });
      succeeded();
      events.emit('pushed', { sessionId, result });
    },
    toError: (err, sessionId) =>
      normaliseError(err, {
        code: 'REMOTE_ERROR',
        what: `push of session ${JSON.stringify(sessionId)}`,
        data: { sessionId, retryable: true },
      }),
    retryable: isRetryable,
    emit: events.emit,
  });

  const schedule = (sessionId: string) => {
    if (typeof sessionId !== 'string' || sessionId === '') return;
    // waiting/queued/backoff: the push to come reads the refs when it runs, so it carries this.
    queue.request(sessionId);
  };
  const flush = async () => {
    queue.flush();
    await queue.drain();
  };

  return Object.freeze({
    schedule,
    afterSync: async (sessionId: string, result: SyncResult) => {
      if (!result.noop) schedule(sessionId);
    },
    on: events.on,
    flush,
    drain: () => queue.drain(),
    status: () => queue.statuses(),
    async close() {
      queue.close();
      await flush();
    },
  });
}

/** One `push.<event>` per push scheduler event: failures at error, retries at warn. */
export function logPushEvent<E extends PushSchedulerEventName>(
  logger: Logger | undefined,
  event: E,
  payload: PushSchedulerEvents[E],
): void {
  if (logger === undefined) return;
  const p = payload as Partial<
    PushSchedulerEvents['failed'] & PushSchedulerEvents['retrying'] & PushSchedulerEvents['pushed']
  >;
  const fields: Record<string, LogFields[string]> = { sessionId: p.sessionId ?? null };
  if (p.error) Object.assign(fields, { code: p.error.code, message: p.error.message });
  if (p.attempts !== undefined) fields.attempts = p.attempts;
  if (p.attempt !== undefined) Object.assign(fields, { attempt: p.attempt, delayMs: p.delayMs ?? null });
  if (p.result)
    Object.assign(fields, {
      url: p.result.url,
      pushed: p.result.pushed.length,
      upToDate: p.result.upToDate.length,
      rejected: p.result.rejected.length,
    });
  emitLog(logger, event === 'failed' ? 'error' : event === 'retrying' ? 'warn' : 'info', `push.${event}`, fields);
}
