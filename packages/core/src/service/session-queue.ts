import type { EntityGitError, ErrorCode } from '@entity-git/git';

/** What a per-session queue shows of each session it holds. */
export interface QueueStatus {
  sessionId: string;
  /**
   * `waiting`: in its delay before it is queued; `queued`: for a free slot; `running`; `backoff`:
   * waiting out a retry delay; `idle`: nothing to do (kept only with `keepIdle`).
   */
  state: 'idle' | 'waiting' | 'queued' | 'running' | 'backoff';
  /** Another run was asked for while this one runs; it follows. */
  again: boolean;
  attempts: number;
  lastError: { code: ErrorCode; message: string; at: number } | null;
}

/** What a queue reports itself: a failed run that will be tried again, and one that will not. */
export interface QueueEvents {
  retrying: { sessionId: string; error: EntityGitError; attempt: number; delayMs: number };
  failed: { sessionId: string; error: EntityGitError; attempts: number };
}

export interface Emitter<Events> {
  /** Log the event, then call its listeners; a listener that throws is ignored. */
  emit<E extends keyof Events>(event: E, payload: Events[E]): void;
  /** Listen to an event; returns the function that stops listening. */
  on<E extends keyof Events>(event: E, listener: (payload: Events[E]) => void): () => void;
}

/** Listeners per event, each event also handed to `log` first. */
export function createEmitter<Events>(
  log: <E extends keyof Events>(event: E, payload: Events[E]) => void,
): Emitter<Events> {
  const listeners = new Map<keyof Events, Set<(p: never) => void>>();
  return {
    emit(event, payload) {
      log(event, payload);
      for (const l of listeners.get(event) ?? []) {
        try {
          (l as (p: typeof payload) => void)(payload);
        } catch {
          // a listener's bug must not stop the queue
        }
      }
    },
    on(event, listener) {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(listener as (p: never) => void);
      return () => {
        set!.delete(listener as (p: never) => void);
      };
    },
  };
}

export interface SessionQueueOptions<S extends QueueStatus> {
  /** Runs at the same time, over all sessions (each session is always serial). */
  concurrency: number;
  /** Attempts per request before `failed`. */
  attempts: number;
  /** First retry delay; doubles per attempt up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /**
   * How long a session waits (`waiting`) after a request before it is queued — and after a run
   * that was asked again — so requests meanwhile join it. Null: queued at once.
   */
  delayMs: number | null;
  /** Keep the status of a session with nothing left to do (`idle`); else the session is forgotten. */
  keepIdle: boolean;
  /** Start each run a microtask after it leaves the queue, so requests made in one go coalesce into it. */
  deferStart: boolean;
  /** Delay and backoff timers do not keep a Node process alive. */
  unrefTimers: boolean;
  /** After `close()`, a session runs at most once more: no retry, no run asked again. */
  lastRunOnClose: boolean;
  /** A new session's status (`state` is set by the queue; fields beyond {@link QueueStatus} are the caller's). */
  status(sessionId: string): S;
  /**
   * One run of a session. `succeeded()` says it succeeded before it returns (attempts start over,
   * the last error is cleared) and gives the attempts it took; a run that resolves has succeeded
   * anyway. A throw is a failed attempt.
   */
  run(status: S, succeeded: () => number): Promise<void>;
  /** The error a failed run reports. */
  toError(err: unknown, sessionId: string): EntityGitError;
  /** Whether another attempt may fix the error (attempts left permitting). */
  retryable(error: EntityGitError): boolean;
  emit<E extends keyof QueueEvents>(event: E, payload: QueueEvents[E]): void;
  /** After each run, once the session's next state is set. */
  afterRun?(status: S): void;
}

interface Slot {
  status: QueueStatus;
  timer: unknown;
}

/**
 * A serial queue per session, several sessions at once: requests coalesce (one while a session
 * waits or is queued joins the coming run; one while it runs asks for one more), failed runs are
 * retried with a doubling backoff, and every session's state is shown.
 */
export class SessionQueue<S extends QueueStatus> {
  readonly #options: SessionQueueOptions<S>;
  /** The sessions' slots, in the order they were first asked for. */
  readonly #slots = new Map<string, Slot>();
  /** Sessions ready to run, first in first out. */
  readonly #ready: string[] = [];
  #running = 0;
  #closed = false;
  #idleWaiters: (() => void)[] = [];

  constructor(options: SessionQueueOptions<S>) {
    this.#options = options;
  }

  /** Ask for a run of `sessionId` (ignored once closed). */
  request(sessionId: string): void {
    if (this.#closed) return;
    let slot = this.#slots.get(sessionId);
    if (!slot) {
      slot = { status: { ...this.#options.status(sessionId), state: 'idle' }, timer: null };
      this.#slots.set(sessionId, slot);
    }
    const { state } = slot.status;
    // waiting, queued or backing off: the coming run reads everything up to now anyway
    if (state === 'running') slot.status.again = true;
    else if (state === 'idle') this.#delay(slot);
  }

  /** The live status of a session the queue holds. */
  get(sessionId: string): S | undefined {
    return this.#slots.get(sessionId)?.status as S | undefined;
  }

  /** Copies of every session's status, in the order they were first asked for. */
  statuses(): S[] {
    return [...this.#slots.values()].map(
      (s) => ({ ...s.status, lastError: s.status.lastError && { ...s.status.lastError } }) as S,
    );
  }

  /** Queue every waiting or backing-off session now (delays and backoffs cut short). */
  flush(): void {
    for (const slot of this.#slots.values())
      if (slot.status.state === 'waiting' || slot.status.state === 'backoff') this.#enqueue(slot);
  }

  /** Resolves when nothing is waiting, queued, running or backing off. */
  drain(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#idleWaiters.push(resolve);
      this.#settle();
    });
  }

  /** Stop accepting requests. */
  close(): void {
    this.#closed = true;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Closed with `lastRunOnClose`: the run under way is the last, neither retried nor repeated. */
  get #final(): boolean {
    return this.#options.lastRunOnClose && this.#closed;
  }

  #settle(): void {
    if (this.#running > 0 || this.#ready.length > 0) return;
    for (const s of this.#slots.values()) if (s.status.state !== 'idle') return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }

  #pump(): void {
    while (this.#running < this.#options.concurrency && this.#ready.length > 0) {
      const slot = this.#slots.get(this.#ready.shift()!);
      if (!slot) continue;
      this.#running++;
      // Deferred: started a tick later, so a burst of requests made in one go coalesces into this run.
      if (this.#options.deferStart) void Promise.resolve().then(() => this.#run(slot));
      else void this.#run(slot);
    }
    this.#settle();
  }

  /** Queued at once, or after the queue's delay (`waiting`) so requests meanwhile join the run. */
  #delay(slot: Slot): void {
    const { delayMs } = this.#options;
    if (delayMs === null) this.#enqueue(slot);
    else this.#wait(slot, 'waiting', delayMs);
  }

  #enqueue(slot: Slot): void {
    if (slot.timer !== null) {
      clearTimeout(slot.timer as Parameters<typeof clearTimeout>[0]);
      slot.timer = null;
    }
    if (slot.status.state === 'queued') return;
    slot.status.state = 'queued';
    this.#ready.push(slot.status.sessionId);
    this.#pump();
  }

  #wait(slot: Slot, state: 'waiting' | 'backoff', ms: number): void {
    slot.status.state = state;
    slot.timer = setTimeout(() => {
      slot.timer = null;
      this.#enqueue(slot);
    }, ms);
    // A pending run does not keep a Node process alive (its owner runs it at shutdown).
    if (this.#options.unrefTimers) (slot.timer as { unref?: () => void } | null)?.unref?.();
  }

  async #run(slot: Slot): Promise<void> {
    const options = this.#options;
    const status = slot.status;
    status.state = 'running';
    status.again = false;
    status.attempts++;
    let retryIn: number | null = null;
    let done = false;
    const succeeded = () => {
      done = true;
      status.lastError = null;
      const attempts = status.attempts;
      status.attempts = 0;
      return attempts;
    };
    try {
      await options.run(status as S, succeeded);
      if (!done) succeeded();
    } catch (err) {
      retryIn = this.#failed(status, err);
    }
    this.#running--;
    if (retryIn !== null) this.#wait(slot, 'backoff', retryIn);
    else if (status.again && !this.#final) this.#delay(slot);
    else if (options.keepIdle) status.state = 'idle';
    else this.#slots.delete(status.sessionId);
    options.afterRun?.(status as S);
    this.#pump();
  }

  /** Record a failed attempt and report it: the delay before the next attempt, or null when none follows. */
  #failed(status: QueueStatus, err: unknown): number | null {
    const options = this.#options;
    const error = options.toError(err, status.sessionId);
    status.lastError = { code: error.code, message: error.message, at: Date.now() };
    const attempts = status.attempts;
    if (!this.#final && options.retryable(error) && attempts < options.attempts) {
      const delayMs = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempts - 1));
      options.emit('retrying', { sessionId: status.sessionId, error, attempt: attempts, delayMs });
      return delayMs;
    }
    status.attempts = 0;
    options.emit('failed', { sessionId: status.sessionId, error, attempts });
    return null;
  }
}

/** A {@link SessionQueue} over `options`. */
export function createSessionQueue<S extends QueueStatus>(options: SessionQueueOptions<S>): SessionQueue<S> {
  return new SessionQueue(options);
}
