import type { DagSource } from '../dag/dag-source.js';
import type { ProjectStore } from '../dag/project-store.js';
import type { EntityGitError, ErrorCode } from '@entity-git/git';
import type { Mirror, SyncResult } from '../mirror/mirror.js';
import type { Logger } from '../observe/logger.js';
import type { AfterTurnResult, ProjectGit, ProjectSnapshot } from '../project-seam.js';
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
