import type { DagSource } from '../dag/dag-source.js';
import type { ProjectStore } from '../dag/project-store.js';
import { EntityGitError, type ErrorCode } from '@entity-git/git';
import type { CommitInfo, Mirror, SyncResult } from '../mirror/mirror.js';
import type { Logger } from '../observe/logger.js';
import { logServiceEvent } from '../observe/observed.js';
import type { AfterTurnResult, ProjectGit, ProjectSnapshot } from '../project/project-git.js';
import type { Packer } from './packer.js';

/** What a dispatcher knows of a turn that the DAG does not: for the project auto-commit. */
export interface TurnReport {
  /** Every path the turn's tools wrote, created or removed (absolute, or relative to the workdir). */
  touchedPaths: readonly string[];
  /** Optional: the bytes the tools left, as git blob ids (see `AfterTurnInput.writtenBlobs`). */
  writtenBlobs?: Readonly<Record<string, string | null>>;
  /** What `service.beforeTurn(sessionId)` returned when the turn began. */
  snapshot?: ProjectSnapshot | null;
  /**
   * The id of the turn's last node (normally the final assistant reply): the session commit whose
   * `Node:` trailer names it labels the project commit (turn N, user message, `Session-Commit`).
   * Optional: without it the service takes the session's newest node when `notify` is called
   * (needs the `dag` option), which is the same node unless the next turn has already begun.
   */
  node?: string | null;
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
  /** Where each service event is reported (`service.<event>`; failures at error). Default: none. */
  logger?: Logger;
  /**
   * The longest `beforeTurn` waits for the project auto-commits of the session's turns already
   * reported (so the previous turn's edits are committed, not taken for the user's). Default 30 s;
   * past it the snapshot is taken anyway (the safe side: at worst a turn is skipped with the warning).
   */
  beforeTurnWaitMs?: number;
}

export interface MirrorService {
  /**
   * The one call a dispatcher makes after each turn: returns at once, never throws. Calls for a
   * session that is queued coalesce into one sync; a call while it runs schedules one more.
   * `turn` (the paths the turn's tools wrote, and the snapshot from `beforeTurn`) asks for the
   * project auto-commit after the sync; reports are kept, in order, until each has run, and each
   * is committed under its own turn (the one `turn.node` names, or the session's newest node when
   * `notify` was called), whatever the sync that runs it has mirrored since.
   */
  notify(sessionId: string, turn?: TurnReport): void;
  /**
   * At the start of a turn: what is uncommitted in the session's project, to hand back in
   * `notify`. First waits until the turns this session already reported have had their project
   * auto-commit (up to `beforeTurnWaitMs`; not while a failed sync waits to retry), so the agent's
   * own edits of the previous turn are not taken for the user's. Null when the session has no
   * project (or the snapshot cannot be taken: the auto-commit then skips safely). Never throws.
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

/** A session node as `notify` saw it: the turn a report is about. */
interface Mark {
  node: string;
  seq: number;
}

/** A turn report as queued: its own turn identity, captured when `notify` was called. */
interface Queued {
  touchedPaths: readonly string[];
  writtenBlobs: Readonly<Record<string, string | null>> | undefined;
  snapshot: ProjectSnapshot | null;
  node: string | null;
  /** The session's newest node at `notify` time (null without a `dag`, or when it cannot be read). */
  mark: Promise<Mark | null>;
}

/** The session branches read by one run, shared by its reports (the repository does not move meanwhile). */
interface RunLogs {
  logs: Map<string, CommitInfo[]>;
  /** The other branches than HEAD's, once asked for. */
  branches: string[] | null;
}

interface Slot {
  status: SessionStatus;
  timer: unknown;
  turns: Queued[];
  /** Reports ever done with: with those still queued, every report made (`beforeTurn` waits on it). */
  handled: number;
  /** Woken whenever a report is done or the session's state changes. */
  waiters: Set<() => void>;
  /** The newest node any capture has seen: the next capture reads only what follows it. */
  seen: Mark | null;
}

const asError = (err: unknown): EntityGitError =>
  err instanceof EntityGitError
    ? err
    : new EntityGitError('STORAGE_ERROR', (err as Error)?.message ?? String(err), {}, { cause: err });

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
    logServiceEvent(options.logger, event, payload);
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
      slot = {
        status: { sessionId, state: 'idle', again: false, attempts: 0, lastError: null, lastResult: null },
        timer: null,
        turns: [],
        handled: 0,
        waiters: new Set(),
        seen: null,
      };
      slots.set(sessionId, slot);
    }
    return slot;
  };

  const beforeTurnWait = Math.max(0, options.beforeTurnWaitMs ?? 30_000);

  const wake = (slot: Slot) => {
    for (const w of [...slot.waiters]) w();
  };

  /** Until the reports queued before `target` are done, the session stops running, or the deadline. */
  async function reportsDone(slot: Slot, target: number): Promise<void> {
    const deadline = Date.now() + beforeTurnWait;
    while (slot.handled < target && (slot.status.state === 'queued' || slot.status.state === 'running')) {
      const left = deadline - Date.now();
      if (left <= 0) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer as Parameters<typeof clearTimeout>[0]);
          slot.waiters.delete(done);
          resolve();
        };
        const timer: unknown = setTimeout(done, left);
        slot.waiters.add(done);
      });
    }
  }

  /**
   * The session's newest node, read from now on (a source that answers at once sees the DAG as of
   * the `notify` call). Reads only the nodes after the newest one seen before; never rejects.
   */
  function capture(sessionId: string, slot: Slot): Promise<Mark | null> {
    const dag = options.dag;
    if (!dag) return Promise.resolve(null);
    try {
      const from = slot.seen;
      const it = dag.nodesAfter(sessionId, from?.seq ?? 0)[Symbol.asyncIterator]();
      const first = it.next();
      return (async () => {
        let best = from;
        for (let r = await first; !r.done; r = await it.next()) {
          if (best === null || r.value.seq > best.seq) best = { node: r.value.id, seq: r.value.seq };
        }
        if (best !== null && (slot.seen === null || best.seq > slot.seen.seq)) slot.seen = best;
        return best;
      })().catch(() => null);
    } catch {
      return Promise.resolve(null);
    }
  }

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

  /**
   * The session commit of a reported turn, from the sync that just ran: the commit whose `Node:`
   * trailer names the report's node (HEAD's branch first, then the others); else the newest commit
   * of HEAD's branch at or before the node `notify` saw (the next turn had begun); else HEAD's tip.
   */
  async function sessionCommitOf(
    sessionId: string,
    report: Queued,
    result: SyncResult,
    seen: RunLogs,
  ): Promise<CommitInfo | undefined> {
    const logOf = async (branch: string) => {
      let log = seen.logs.get(branch);
      if (!log) seen.logs.set(branch, (log = await mirror.log(sessionId, { branch })));
      return log;
    };
    const mark = await report.mark;
    const node = report.node ?? mark?.node ?? null;
    const head = result.head === null ? [] : await logOf(result.head);
    if (node !== null) {
      const found = head.find((c) => c.node === node);
      if (found) return found;
      seen.branches ??= (await mirror.branches(sessionId)).map((b) => b.name).filter((b) => b !== result.head);
      for (const b of seen.branches) {
        const hit = (await logOf(b)).find((c) => c.node === node);
        if (hit) return hit;
      }
    }
    if (mark !== null) {
      const before = head.find((c) => c.seq !== null && c.seq <= mark.seq);
      if (before) return before;
    }
    return head[0];
  }

  /** The project auto-commit of one reported turn, labelled from that turn's session commit. */
  async function projectTurn(sessionId: string, report: Queued, result: SyncResult, seen: RunLogs): Promise<void> {
    const { projects, projectGit } = options;
    if (!projects || !projectGit) return;
    const project = await projects.projectOfSession(sessionId);
    if (project === null) return;
    if (project.status !== 'active') {
      emit('skipped', {
        sessionId,
        reason: `project-${project.status}`,
        warning: `the project ${JSON.stringify(project.name)} is ${project.status}: the agent's edits are not auto-committed`,
        result,
      });
      return;
    }
    const tip = await sessionCommitOf(sessionId, report, result, seen);
    const session = options.dag ? await options.dag.getSession(sessionId) : null;
    const outcome = await projectGit.afterTurn({
      workdir: project.workdir,
      sessionId,
      turn: tip?.turn ?? 1,
      userMessage: tip ? tip.subject.replace(/^turn \d+:? ?/, '') : '',
      model: session?.model ?? 'unknown model',
      sessionCommit: tip?.sha ?? null,
      touchedPaths: report.touchedPaths,
      ...(report.writtenBlobs ? { writtenBlobs: report.writtenBlobs } : {}),
      snapshot: report.snapshot,
    });
    emit('project', { sessionId, projectId: project.id, result: outcome });
    if (outcome.status === 'skipped' && outcome.warning !== null)
      emit('skipped', { sessionId, reason: outcome.reason, warning: outcome.warning, result });
  }

  async function run(sessionId: string): Promise<void> {
    const slot = slotOf(sessionId);
    slot.status.state = 'running';
    slot.status.again = false;
    let retryIn: number | null = null;
    // Only the reports queued before this sync read the DAG: the ones that come in while it runs
    // may be about turns it has not mirrored, and go to the next run (`again`).
    const batch = slot.turns.length;
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
          await projectTurn(sessionId, slot.turns[0]!, result, seen);
          slot.turns.shift();
          slot.handled++;
          wake(slot);
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
    wake(slot);
    pump();
  }

  return {
    notify(sessionId: string, turn?: TurnReport): void {
      try {
        if (closed || typeof sessionId !== 'string') return;
        const slot = slotOf(sessionId);
        if (turn && Array.isArray(turn.touchedPaths)) {
          const node = typeof turn.node === 'string' ? turn.node : null;
          const writtenBlobs =
            turn.writtenBlobs && typeof turn.writtenBlobs === 'object' ? { ...turn.writtenBlobs } : undefined;
          slot.turns.push({
            touchedPaths: [...turn.touchedPaths],
            writtenBlobs,
            snapshot: turn.snapshot ?? null,
            node,
            mark: capture(sessionId, slot),
          });
        }
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
        if (project === null) return null;
        // The turns already reported are committed (or skipped) first: their edits are the agent's.
        const slot = slots.get(sessionId);
        if (slot) await reportsDone(slot, slot.handled + slot.turns.length);
        return await options.projectGit.beforeTurn(project.workdir);
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
      const sessions = [...slots.values()].map((s) => ({
        ...s.status,
        lastError: s.status.lastError && { ...s.status.lastError },
      }));
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
