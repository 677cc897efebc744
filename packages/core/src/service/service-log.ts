import type { LogFields, Logger } from '../observe/logger.js';
import { emitLog } from '../observe/loggers.js';
import type { ServiceEventName, ServiceEvents } from './service-types.js';

// The events this part emits through its `logger` option (packages/core/README.md, "Observability"
// lists them with their fields).

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
