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

/**
 * A serial queue per session, several sessions at once: requests coalesce (one while a session
 * waits or is queued joins the coming run; one while it runs asks for one more), failed runs are
 * retried with a doubling backoff, and every session's state is shown.
 */
export interface SessionQueue<S extends QueueStatus> {
  /** Ask for a run of `sessionId` (ignored once closed). */
  request(sessionId: string): void;
  /** The live status of a session the queue holds. */
  get(sessionId: string): S | undefined;
  /** Copies of every session's status, in the order they were first asked for. */
  statuses(): S[];
  /** Queue every waiting or backing-off session now (delays and backoffs cut short). */
  flush(): void;
  /** Resolves when nothing is waiting, queued, running or backing off. */
  drain(): Promise<void>;
  /** Stop accepting requests. */
  close(): void;
  readonly closed: boolean;
}

interface Slot {
  status: QueueStatus;
  timer: unknown;
}

export function createSessionQueue<S extends QueueStatus>(options: SessionQueueOptions<S>): SessionQueue<S> {
  const q: Queue<S> = { options, slots: new Map(), ready: [], running: 0, closed: false, idleWaiters: [] };
  const { slots } = q;
  return {
    request(sessionId: string): void {
      if (q.closed) return;
      let slot = slots.get(sessionId);
      if (!slot) {
        slot = { status: { ...options.status(sessionId), state: 'idle' }, timer: null };
        slots.set(sessionId, slot);
      }
      const { state } = slot.status;
      // waiting, queued or backing off: the coming run reads everything up to now anyway
      if (state === 'running') slot.status.again = true;
      else if (state === 'idle') {
        if (options.delayMs === null) enqueue(q, slot);
        else wait(q, slot, 'waiting', options.delayMs);
      }
    },
    get: (sessionId) => slots.get(sessionId)?.status as S | undefined,
    statuses: () =>
      [...slots.values()].map(
        (s) => ({ ...s.status, lastError: s.status.lastError && { ...s.status.lastError } }) as S,
      ),
    flush(): void {
      for (const slot of slots.values())
        if (slot.status.state === 'waiting' || slot.status.state === 'backoff') enqueue(q, slot);
    },
    drain: () =>
      new Promise<void>((resolve) => {
        q.idleWaiters.push(resolve);
        settle(q);
      }),
    close(): void {
      q.closed = true;
    },
    get closed() {
      return q.closed;
    },
  };
}

/** A queue's state: its sessions' slots, the ones ready to run, how many run, who waits for idle. */
interface Queue<S extends QueueStatus> {
  readonly options: SessionQueueOptions<S>;
  readonly slots: Map<string, Slot>;
  readonly ready: string[];
  running: number;
  closed: boolean;
  idleWaiters: (() => void)[];
}

/** Closed with `lastRunOnClose`: the run under way is the last, neither retried nor repeated. */
const final = (q: Queue<QueueStatus>): boolean => q.options.lastRunOnClose && q.closed;

function settle(q: Queue<QueueStatus>): void {
  if (q.running > 0 || q.ready.length > 0) return;
  for (const s of q.slots.values()) if (s.status.state !== 'idle') return;
  const waiters = q.idleWaiters;
  q.idleWaiters = [];
  for (const w of waiters) w();
}

function pump<S extends QueueStatus>(q: Queue<S>): void {
  while (q.running < q.options.concurrency && q.ready.length > 0) {
    const slot = q.slots.get(q.ready.shift()!);
    if (!slot) continue;
    q.running++;
    // Deferred: started a tick later, so a burst of requests made in one go coalesces into this run.
    if (q.options.deferStart) void Promise.resolve().then(() => run(q, slot));
    else void run(q, slot);
  }
  settle(q);
}

function enqueue<S extends QueueStatus>(q: Queue<S>, slot: Slot): void {
  if (slot.timer !== null) {
    clearTimeout(slot.timer as Parameters<typeof clearTimeout>[0]);
    slot.timer = null;
  }
  if (slot.status.state === 'queued') return;
  slot.status.state = 'queued';
  q.ready.push(slot.status.sessionId);
  pump(q);
}

function wait<S extends QueueStatus>(q: Queue<S>, slot: Slot, state: 'waiting' | 'backoff', ms: number): void {
  slot.status.state = state;
  slot.timer = setTimeout(() => {
    slot.timer = null;
    enqueue(q, slot);
  }, ms);
  // A pending run does not keep a Node process alive (its owner runs it at shutdown).
  if (q.options.unrefTimers) (slot.timer as { unref?: () => void } | null)?.unref?.();
}

async function run<S extends QueueStatus>(q: Queue<S>, slot: Slot): Promise<void> {
  const { options } = q;
  const { attempts: maxAttempts, baseDelayMs: baseDelay, maxDelayMs: maxDelay, delayMs } = options;
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
    const error = options.toError(err, status.sessionId);
    status.lastError = { code: error.code, message: error.message, at: Date.now() };
    const attempts = status.attempts;
    if (!final(q) && options.retryable(error) && attempts < maxAttempts) {
      retryIn = Math.min(maxDelay, baseDelay * 2 ** (attempts - 1));
      options.emit('retrying', { sessionId: status.sessionId, error, attempt: attempts, delayMs: retryIn });
    } else {
      status.attempts = 0;
      options.emit('failed', { sessionId: status.sessionId, error, attempts });
    }
  }
  q.running--;
  if (retryIn !== null) wait(q, slot, 'backoff', retryIn);
  else if (status.again && !final(q)) {
    if (delayMs === null) enqueue(q, slot);
    else wait(q, slot, 'waiting', delayMs);
  } else if (options.keepIdle) status.state = 'idle';
  else q.slots.delete(status.sessionId);
  options.afterRun?.(status as S);
  pump(q);
}
