import type { LogFields, Logger } from '../observe/logger.js';
import { codeOf, emitLog, messageOf, now, since } from '../observe/loggers.js';
import type { Mirror, SyncResult } from './mirror.js';

// The events this part emits through its `logger` option (packages/core/README.md, "Observability"
// lists them with their fields).

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
