import type { DagSource } from '../dag/dag-source.js';
import type { ProjectStore } from '../dag/project-store.js';
import { EntityGitError, type ErrorCode } from '../errors.js';
import type { Mirror, SyncResult } from '../mirror/mirror.js';
import type { AfterTurnResult, ProjectGit, ProjectSnapshot } from '../project/project-git.js';
import type { Packer } from './packer.js';

/** What a dispatcher knows of a turn that the DAG does not: for the project auto-commit. */
export interface TurnReport {
  /** Every path the turn's tools wrote, created or removed (absolute, or relative to the workdir). */
  touchedPaths: readonly string[];
  /** What `service.beforeTurn(sessionId)` returned when the turn began. */
  snapshot?: ProjectSnapshot | null;
}

export interface ServiceEvents {
  /** A sync wrote something (commits, a branch move, a HEAD switch). */
  committed: { sessionId: string; result: SyncResult };
  /** A sync finished with a warning and did part of its work (e.g. a project commit was skipped). */
  skipped: { sessionId: string; reason: string; warning: string; result?: SyncResult };
  /** A sync failed and will be tried again after `delayMs`. */
  retrying: { sessionId: string; error: EntityGitError; attempt: number; delayMs: number };
  /** A sync failed for good (permanent error, or out of attempts); the next `notify` starts over. */
  failed: { sessionId: string; error: EntityGitError; attempts: number };
  /** Every finished sync, whether it wrote anything or not. */
  synced: { sessionId: string; result: SyncResult };
  /** The project auto-commit of a turn ran (committed, or skipped: a warned skip also emits `skipped`). */
  project: { sessionId: string; projectId: string; result: AfterTurnResult };
}

export type ServiceEventName = keyof ServiceEvents;

export interface SessionStatus {
  sessionId: string;
  /** Waiting for a slot, running, or waiting out a retry delay. */
  state: 'queued' | 'running' | 'backoff' | 'idle';
  /** Another sync was asked for while this one runs; it follows at once. */
  again: boolean;
  attempts: number;
  lastError: { code: ErrorCode; message: string; at: number } | null;
  lastResult: SyncResult | null;
}

export interface ServiceStatus {
  queued: number;
  running: number;
  backoff: number;
  sessions: SessionStatus[];
}

export interface MirrorServiceOptions {
  mirror: Mirror;
  /** Sessions synced at the same time (each session is always serial). Default 4. */
  concurrency?: number;
  /** Attempts per notify before `failed`. Default 5. */
  attempts?: number;
  /** First retry delay; doubles per attempt up to `maxDelayMs`. Defaults 200 ms and 30 s. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /**
   * Runs after each successful sync (project auto-commit hooks in here). A returned warning is
   * reported as a `skipped` event; a throw counts as a failed attempt.
   */
  afterSync?: (sessionId: string, result: SyncResult) => Promise<{ reason: string; warning: string } | void>;
  /** With `projectGit`: after a turn of a session bound to a project, auto-commit the agent's edits. */
  projects?: ProjectStore;
  projectGit?: ProjectGit;
  /** Where the committer's model name is read (`session.model`); without it, "unknown model". */
  dag?: DagSource;
  /**
   * Packs repositories in the background after their commits (`createPacker`): asked after each
   * sync that wrote objects, never awaited by a turn; `drain()` waits for it too.
   */
  packer?: Packer;
}

export interface MirrorService {
  /**
   * The one call a dispatcher makes after each turn: returns at once, never throws. Calls for a
   * session that is queued coalesce into one sync; a call while it runs schedules one more.
   * `turn` (the paths the turn's tools wrote, and the snapshot from `beforeTurn`) asks for the
   * project auto-commit after the sync; reports are kept, in order, until each has run.
   */
  notify(sessionId: string, turn?: TurnReport): void;
  /**
   * At the start of a turn: what is uncommitted in the session's project, to hand back in
   * `notify`. Null when the session has no project (or the snapshot cannot be taken: the
   * auto-commit then skips safely). Never throws.
   */
  beforeTurn(sessionId: string): Promise<ProjectSnapshot | null>;
  /** Listen to an event; returns the function that stops listening. */
  on<E extends ServiceEventName>(event: E, listener: (payload: ServiceEvents[E]) => void): () => void;
  /** Resolves when nothing is queued, running or waiting to retry (for shutdown and tests). */
  drain(): Promise<void>;
  status(): ServiceStatus;
  /** Stop accepting work, then drain. */
  close(): Promise<void>;
}

/** Errors that another attempt cannot fix: the DAG or the input is wrong, not the storage. */
const PERMANENT: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'INVALID_ID', 'INVALID_NODE', 'INVALID_SESSION', 'NON_JSON_VALUE', 'DAG_DUPLICATE_ID', 'DAG_DUPLICATE_SEQ',
  'DAG_MISSING_PREDECESSOR', 'DAG_CYCLE', 'SESSION_NOT_FOUND', 'INVALID_OPTION',
]);

interface Slot {
  status: SessionStatus;
  timer: unknown;
  turns: TurnReport[];
}

const asError = (err: unknown): EntityGitError =>
  err instanceof EntityGitError ? err : new EntityGitError('STORAGE_ERROR', (err as Error)?.message ?? String(err), {}, { cause: err });

/**
 * The async mirror service (DESIGN.md §5): a serial queue per session, several sessions at once,
 * retries with backoff, events. It only reads the DAG (through the mirror): a git failure never
 * touches it.
 */
export function createMirrorService(options: MirrorServiceOptions): MirrorService {
  const mirror = options.mirror;
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const maxAttempts = Math.max(1, options.attempts ?? 5);
  const baseDelay = options.baseDelayMs ?? 200;
  const maxDelay = options.maxDelayMs ?? 30_000;
  const slots = new Map<string, Slot>();
  const ready: string[] = [];
  const listeners = new Map<ServiceEventName, Set<(p: never) => void>>();
  let running = 0;
  let closed = false;
  let idleWaiters: (() => void)[] = [];

  const emit = <E extends ServiceEventName>(event: E, payload: ServiceEvents[E]) => {
    for (const l of listeners.get(event) ?? []) {
      try {
        (l as (p: ServiceEvents[E]) => void)(payload);
      } catch {
        // a listener's bug must not stop the queue
      }
    }
  };

  const slotOf = (sessionId: string): Slot => {
    let slot = slots.get(sessionId);
    if (!slot) {
      slot = { status: { sessionId, state: 'idle', again: false, attempts: 0, lastError: null, lastResult: null }, timer: null, turns: [] };
      slots.set(sessionId, slot);
    }
    return slot;
  };

  const settleIfIdle = () => {
    if (running > 0 || ready.length > 0) return;
    for (const s of slots.values()) if (s.status.state !== 'idle') return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const w of waiters) w();
  };

  const pump = () => {
    while (running < concurrency && ready.length > 0) {
      const sessionId = ready.shift()!;
      running++;
      // Started a tick later, so a burst of notify calls made in one go coalesces into this run.
      void Promise.resolve().then(() => run(sessionId));
    }
    settleIfIdle();
  };

  const enqueue = (slot: Slot) => {
    slot.status.state = 'queued';
    ready.push(slot.status.sessionId);
    pump();
  };

  /** The project auto-commit of one reported turn, on the session's HEAD branch tip. */
  async function projectTurn(sessionId: string, report: TurnReport, result: SyncResult): Promise<void> {
    const { projects, projectGit } = options;
    if (!projects || !projectGit) return;
    const project = await projects.projectOfSession(sessionId);
    if (project === null) return;
    if (project.status !== 'active') {
      emit('skipped', { sessionId, reason: `project-${project.status}`, warning: `the project ${JSON.stringify(project.name)} is ${project.status}: the agent's edits are not auto-committed`, result });
      return;
    }
    const tip = result.head === null ? undefined : (await mirror.log(sessionId, { branch: result.head }))[0];
    const session = options.dag ? await options.dag.getSession(sessionId) : null;
    const outcome = await projectGit.afterTurn({
      workdir: project.workdir,
      sessionId,
      turn: tip?.turn ?? 1,
      userMessage: tip ? tip.subject.replace(/^turn \d+:? ?/, '') : '',
      model: session?.model ?? 'unknown model',
      sessionCommit: tip?.sha ?? null,
      touchedPaths: report.touchedPaths,
      snapshot: report.snapshot ?? null,
    });
    emit('project', { sessionId, projectId: project.id, result: outcome });
    if (outcome.status === 'skipped' && outcome.warning !== null) emit('skipped', { sessionId, reason: outcome.reason, warning: outcome.warning, result });
  }

  async function run(sessionId: string): Promise<void> {
    const slot = slotOf(sessionId);
    slot.status.state = 'running';
    slot.status.again = false;
    let retryIn: number | null = null;
    try {
      slot.status.attempts++;
      const result = await mirror.sync(sessionId);
      slot.status.lastResult = result;
      slot.status.lastError = null;
      const attempts = slot.status.attempts;
      slot.status.attempts = 0;
      emit('synced', { sessionId, result });
      if (!result.noop) emit('committed', { sessionId, result });
      if (result.commitsWritten > 0) options.packer?.request(`${mirror.repoPath(sessionId)}/.git`);
      if (result.unknownHead !== undefined) {
        emit('skipped', { sessionId, reason: 'unknown-head', warning: `the session head ${JSON.stringify(result.unknownHead)} is not in the DAG; HEAD follows the newest leaf`, result });
      }
      try {
        if (options.afterSync) {
          const warned = await options.afterSync(sessionId, result);
          if (warned) emit('skipped', { sessionId, ...warned, result });
        }
        while (slot.turns.length > 0) {
          await projectTurn(sessionId, slot.turns[0]!, result);
          slot.turns.shift();
        }
      } catch (err) {
        slot.status.attempts = attempts;
        throw err;
      }
    } catch (err) {
      const error = asError(err);
      slot.status.lastError = { code: error.code, message: error.message, at: Date.now() };
      const attempts = slot.status.attempts;
      if (PERMANENT.has(error.code) || attempts >= maxAttempts) {
        slot.status.attempts = 0;
        emit('failed', { sessionId, error, attempts });
      } else {
        retryIn = Math.min(maxDelay, baseDelay * 2 ** (attempts - 1));
        emit('retrying', { sessionId, error, attempt: attempts, delayMs: retryIn });
      }
    } finally {
      running--;
    }
    if (retryIn !== null) {
      slot.status.state = 'backoff';
      slot.timer = setTimeout(() => {
        slot.timer = null;
        enqueue(slot);
      }, retryIn);
    } else if (slot.status.again) {
      enqueue(slot);
    } else {
      slot.status.state = 'idle';
    }
    pump();
  }

  return {
    notify(sessionId: string, turn?: TurnReport): void {
      try {
        if (closed || typeof sessionId !== 'string') return;
        const slot = slotOf(sessionId);
        if (turn && Array.isArray(turn.touchedPaths)) slot.turns.push({ touchedPaths: [...turn.touchedPaths], snapshot: turn.snapshot ?? null });
        if (slot.status.state === 'running') slot.status.again = true;
        else if (slot.status.state === 'idle') enqueue(slot);
        // queued or waiting to retry: the coming sync reads everything up to now anyway
      } catch {
        // never throw into the dispatcher
      }
    },
    async beforeTurn(sessionId: string): Promise<ProjectSnapshot | null> {
      try {
        if (!options.projects || !options.projectGit) return null;
        const project = await options.projects.projectOfSession(sessionId);
        return project === null ? null : await options.projectGit.beforeTurn(project.workdir);
      } catch {
        return null;
      }
    },
    on(event, listener) {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(listener as (p: never) => void);
      return () => set!.delete(listener as (p: never) => void);
    },
    async drain(): Promise<void> {
      await new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        settleIfIdle();
      });
      await options.packer?.idle();
    },
    status(): ServiceStatus {
      const sessions = [...slots.values()].map((s) => ({ ...s.status, lastError: s.status.lastError && { ...s.status.lastError } }));
      return {
        queued: sessions.filter((s) => s.state === 'queued').length,
        running: sessions.filter((s) => s.state === 'running').length,
        backoff: sessions.filter((s) => s.state === 'backoff').length,
        sessions,
      };
    },
    async close(): Promise<void> {
      closed = true;
      await this.drain();
    },
  };
}
