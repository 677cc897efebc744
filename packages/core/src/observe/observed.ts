import { isEntityGitError, type PackReport } from '@entity-git/git';
import type { Mirror, SyncResult } from '../mirror/mirror.js';
import type { AfterTurnInput, AfterTurnResult } from '../project/project-git.js';
import type { PushSchedulerEventName, PushSchedulerEvents } from '../remote/push-scheduler.js';
import type { ServiceEventName, ServiceEvents } from '../service/mirror-service.js';
import type { LogFields, Logger } from './logger.js';
import { emitLog, now, since } from './loggers.js';

// The events each part emits through its `logger` option (packages/core/README.md,
// "Observability" lists them with their fields).

const codeOf = (err: unknown): string => (isEntityGitError(err) ? err.code : 'UNKNOWN');
const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** `mirror.sync` (debug when nothing changed, info otherwise) or `mirror.sync.failed` (warn), timed. */
export function observeMirror(mirror: Mirror, logger: Logger | undefined): Mirror {
  if (logger === undefined) return mirror;
  const sync = mirror.sync.bind(mirror);
  mirror.sync = async (sessionId, options) => {
    const start = now();
    try {
      const r = await sync(sessionId, options);
      emitLog(logger, r.noop ? 'debug' : 'info', 'mirror.sync', syncFields(r, since(start)));
      return r;
    } catch (err) {
      emitLog(logger, 'warn', 'mirror.sync.failed', {
        sessionId,
        durationMs: since(start),
        code: codeOf(err),
        message: messageOf(err),
      });
      throw err;
    }
  };
  return mirror;
}

function syncFields(r: SyncResult, durationMs: number): LogFields {
  return {
    sessionId: r.sessionId,
    durationMs,
    commitsWritten: r.commitsWritten,
    objectsWritten: r.objectsWritten,
    bytesWritten: r.bytesWritten,
    nodesRead: r.nodesRead,
    branchesMoved: r.branchesMoved,
    head: r.head,
    noop: r.noop,
    derivation: r.derivation,
  };
}

/** One `service.<event>` per service event: failures at error, retries and skips at warn. */
export function logServiceEvent<E extends ServiceEventName>(
  logger: Logger | undefined,
  event: E,
  payload: ServiceEvents[E],
): void {
  if (logger === undefined) return;
  const p = payload as Partial<
    ServiceEvents['failed'] &
      ServiceEvents['retrying'] &
      ServiceEvents['skipped'] &
      ServiceEvents['project'] &
      ServiceEvents['synced']
  >;
  const fields: Record<string, LogFields[string]> = { sessionId: p.sessionId ?? null };
  if (p.result && 'commitsWritten' in p.result)
    Object.assign(fields, { commitsWritten: p.result.commitsWritten, noop: p.result.noop });
  if (p.error) Object.assign(fields, { code: p.error.code, message: p.error.message });
  if (p.attempts !== undefined) fields.attempts = p.attempts;
  if (p.attempt !== undefined) Object.assign(fields, { attempt: p.attempt, delayMs: p.delayMs ?? null });
  if (p.reason !== undefined) Object.assign(fields, { reason: p.reason, warning: p.warning ?? null });
  if (p.projectId !== undefined && p.result && 'status' in p.result)
    Object.assign(fields, { projectId: p.projectId, status: p.result.status });
  const level =
    event === 'failed'
      ? 'error'
      : event === 'retrying' || event === 'skipped'
        ? 'warn'
        : event === 'synced'
          ? 'debug'
          : 'info';
  emitLog(logger, level, `service.${event}`, fields);
}

/** `packer.packed` (info: objects, bytes, loose files removed) or `packer.failed` (warn), timed. */
export function logPackerRun(
  logger: Logger | undefined,
  gitdir: string,
  start: number,
  report: PackReport | void | null,
  error?: unknown,
): void {
  if (logger === undefined || report === null) return;
  if (error !== undefined) {
    emitLog(logger, 'warn', 'packer.failed', {
      gitdir,
      durationMs: since(start),
      code: codeOf(error),
      message: messageOf(error),
    });
    return;
  }
  emitLog(
    logger,
    'info',
    'packer.packed',
    report
      ? {
          gitdir,
          durationMs: since(start),
          pack: report.pack,
          objects: report.objects,
          bytes: report.bytes,
          looseRemoved: report.looseRemoved,
          packsRemoved: report.packsRemoved ?? 0,
        }
      : { gitdir, durationMs: since(start) },
  );
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

/** `project.commit` (info: status, reason, paths, duration) or `project.commit.failed` (error). */
export function observeAfterTurn(
  logger: Logger | undefined,
  afterTurn: (input: AfterTurnInput) => Promise<AfterTurnResult>,
): (input: AfterTurnInput) => Promise<AfterTurnResult> {
  if (logger === undefined) return afterTurn;
  return async (input) => {
    const start = now();
    const workdir = typeof input?.workdir === 'string' ? input.workdir : null;
    try {
      const r = await afterTurn(input);
      const fields: Record<string, LogFields[string]> = { workdir, durationMs: since(start), status: r.status };
      if (r.status === 'committed')
        Object.assign(fields, {
          sessionId: input.sessionId,
          turn: input.turn,
          commit: r.commit,
          paths: r.paths.length,
        });
      if (r.status === 'skipped') Object.assign(fields, { reason: r.reason, warning: r.warning });
      emitLog(logger, r.status === 'skipped' && r.warning !== null ? 'warn' : 'info', 'project.commit', fields);
      return r;
    } catch (err) {
      emitLog(logger, 'error', 'project.commit.failed', {
        workdir,
        durationMs: since(start),
        code: codeOf(err),
        message: messageOf(err),
      });
      throw err;
    }
  };
}
