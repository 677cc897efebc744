import { type EntityGitError, type ErrorCode, normaliseError } from '@entity-git/git';
import { logServiceEvent } from './service-log.js';
import type { ProjectSnapshot } from '../project-seam.js';
import { capture, projectTurn, type Reports, reportsDone, type RunLogs, wake } from './project-turns.js';
import { createEmitter, type Emitter, SessionQueue } from './session-queue.js';
import type {
  MirrorService,
  MirrorServiceOptions,
  ServiceEvents,
  ServiceStatus,
  SessionStatus,
  TurnReport,
} from './service-types.js';

export type {
  MirrorService,
  MirrorServiceOptions,
  ServiceEventName,
  ServiceEvents,
  ServiceStatus,
  SessionStatus,
  TurnReport,
} from './service-types.js';

/** Errors that another attempt cannot fix: the DAG or the input is wrong, not the storage. */
const PERMANENT: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'INVALID_ID',
  'INVALID_NODE',
  'INVALID_SESSION',
  'NON_JSON_VALUE',
  'DAG_DUPLICATE_ID',
  'DAG_DUPLICATE_SEQ',
  'DAG_MISSING_PREDECESSOR',
  'DAG_CYCLE',
  'SESSION_NOT_FOUND',
  'INVALID_OPTION',
  'REPO_FORMAT_OLD',
]);

const asError = (err: unknown): EntityGitError => normaliseError(err, { code: 'STORAGE_ERROR' });

/**
 * The async mirror service (docs/design.md, 'Safety rules', consistency): a serial queue per
 * session, several sessions at once, retries with backoff, events. It only reads the DAG (through
 * the mirror): a git failure never touches it.
 */
export function createMirrorService(options: MirrorServiceOptions): MirrorService {
  return new SessionMirrorService(options);
}

/** The service: one queue of syncs per session, each session's turn reports, the events. */
class SessionMirrorService implements MirrorService {
  readonly #options: MirrorServiceOptions;
  readonly #reports = new Map<string, Reports>();
  readonly #events: Emitter<ServiceEvents>;
  readonly #beforeTurnWait: number;
  readonly #queue: SessionQueue<SessionStatus>;
  readonly on: MirrorService['on'];

  constructor(options: MirrorServiceOptions) {
    this.#options = options;
    this.#events = createEmitter<ServiceEvents>((event, payload) => logServiceEvent(options.logger, event, payload));
    this.on = this.#events.on;
    this.#beforeTurnWait = Math.max(0, options.beforeTurnWaitMs ?? 30_000);
    this.#queue = new SessionQueue<SessionStatus>({
      concurrency: Math.max(1, options.concurrency ?? 4),
      attempts: Math.max(1, options.attempts ?? 5),
      baseDelayMs: options.baseDelayMs ?? 200,
      maxDelayMs: options.maxDelayMs ?? 30_000,
      delayMs: null,
      keepIdle: true,
      deferStart: true,
      unrefTimers: false,
      lastRunOnClose: false,
      status: (sessionId) => ({
        sessionId,
        state: 'idle',
        again: false,
        attempts: 0,
        lastError: null,
        lastResult: null,
      }),
      run: (status, succeeded) => this.#runSync(status, succeeded),
      toError: asError,
      retryable: (error) => !PERMANENT.has(error.code),
      emit: this.#events.emit,
      afterRun: (status) => wake(this.#reportsOf(status.sessionId)),
    });
  }

  notify(sessionId: string, turn?: TurnReport): void {
    try {
      if (this.#queue.closed || typeof sessionId !== 'string') return;
      if (turn && Array.isArray(turn.touchedPaths)) this.#queueTurn(sessionId, turn);
      // running: one more sync follows; queued or waiting to retry: the coming sync reads everything up to now
      this.#queue.request(sessionId);
    } catch {
      // never throw into the dispatcher
    }
  }

  async beforeTurn(sessionId: string): Promise<ProjectSnapshot | null> {
    const options = this.#options;
    try {
      if (!options.projects || !options.projectGit) return null;
      const project = await options.projects.projectOfSession(sessionId);
      if (project === null) return null;
      // The turns already reported are committed (or skipped) first: their edits are the agent's.
      const slot = this.#reports.get(sessionId);
      const state = () => this.#queue.get(sessionId)?.state ?? 'idle';
      if (slot) await reportsDone(slot, slot.handled + slot.turns.length, state, this.#beforeTurnWait);
      return await options.projectGit.beforeTurn(project.workdir);
    } catch {
      return null;
    }
  }

  async drain(): Promise<void> {
    await this.#queue.drain();
    await this.#options.packer?.idle();
  }

  status(): ServiceStatus {
    const sessions = this.#queue.statuses();
    return {
      queued: sessions.filter((s) => s.state === 'queued').length,
      running: sessions.filter((s) => s.state === 'running').length,
      backoff: sessions.filter((s) => s.state === 'backoff').length,
      sessions,
    };
  }

  async close(): Promise<void> {
    this.#queue.close();
    await this.drain();
  }

  #reportsOf(sessionId: string): Reports {
    let slot = this.#reports.get(sessionId);
    if (!slot) {
      slot = { turns: [], handled: 0, waiters: new Set(), seen: null };
      this.#reports.set(sessionId, slot);
    }
    return slot;
  }

  /** A turn report queued for the next sync, copied as it is now, with its turn identity captured. */
  #queueTurn(sessionId: string, turn: TurnReport): void {
    const slot = this.#reportsOf(sessionId);
    const node = typeof turn.node === 'string' ? turn.node : null;
    const writtenBlobs =
      turn.writtenBlobs && typeof turn.writtenBlobs === 'object' ? { ...turn.writtenBlobs } : undefined;
    slot.turns.push({
      touchedPaths: [...turn.touchedPaths],
      writtenBlobs,
      snapshot: turn.snapshot ?? null,
      node,
      mark: capture(this.#options.dag, sessionId, slot),
    });
  }

  /** One run of a session: its sync, the events, a pack request, then the project turns reported before it. */
  async #runSync(status: SessionStatus, succeeded: () => number): Promise<void> {
    const options = this.#options;
    const emit = this.#events.emit;
    const { mirror } = options;
    const { sessionId } = status;
    const slot = this.#reportsOf(sessionId);
    // Only the reports queued before this sync read the DAG: the ones that come in while it runs
    // may be about turns it has not mirrored, and go to the next run (`again`).
    const batch = slot.turns.length;
    const result = await mirror.sync(sessionId);
    status.lastResult = result;
    const attempts = succeeded();
    emit('synced', { sessionId, result });
    if (!result.noop) emit('committed', { sessionId, result });
    if (result.commitsWritten > 0) options.packer?.request(`${mirror.repoPath(sessionId)}/.git`);
    if (result.unknownHead !== undefined) {
      emit('skipped', {
        sessionId,
        reason: 'unknown-head',
        warning: `the session head ${JSON.stringify(result.unknownHead)} is not in the DAG; HEAD follows the newest leaf`,
        result,
      });
    }
    try {
      if (options.afterSync) {
        const warned = await options.afterSync(sessionId, result);
        if (warned) emit('skipped', { sessionId, ...warned, result });
      }
      const seen: RunLogs = { logs: new Map(), branches: null };
      for (let i = 0; i < batch && slot.turns.length > 0; i++) {
        await projectTurn(options, emit, { sessionId, report: slot.turns[0]!, result, seen });
        slot.turns.shift();
        slot.handled++;
        wake(slot);
      }
    } catch (err) {
      status.attempts = attempts;
      throw err;
    }
  }
}
