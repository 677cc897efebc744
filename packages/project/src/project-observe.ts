import type { LogFields, Logger } from '@entity-git/core';
import { codeOf, emitLog, messageOf, now, since } from '@entity-git/core';
import { isEntityGitError } from '@entity-git/git';
import type { AfterTurnInput, AfterTurnResult } from '@entity-git/core';
import type { RevertInput, RevertResult } from '@entity-git/core';

// The events this part emits through its `logger` option (packages/core/README.md, "Observability"
// lists them with their fields).

/** `project.commit` (info: status, reason, paths, duration) or `project.commit.failed` (error). */
export async function observeAfterTurn(
  logger: Logger,
  input: AfterTurnInput,
  afterTurn: () => Promise<AfterTurnResult>,
): Promise<AfterTurnResult> {
  const start = now();
  const workdir = typeof input?.workdir === 'string' ? input.workdir : null;
  try {
    const r = await afterTurn();
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
}

/** `project.revert` (info: kind, commit, paths, duration), or `project.revert.refused` (warn: a refusal's code and reason) / `project.revert.failed` (error). */
export async function observeRevert(
  logger: Logger,
  input: RevertInput,
  revert: () => Promise<RevertResult>,
): Promise<RevertResult> {
  const start = now();
  const workdir = typeof input?.workdir === 'string' ? input.workdir : null;
  try {
    const r = await revert();
    emitLog(logger, 'info', 'project.revert', {
      workdir,
      durationMs: since(start),
      sessionId: r.sessionId,
      turn: r.turn,
      kind: r.kind,
      commit: r.commit,
      paths: r.paths.length,
    });
    return r;
  } catch (err) {
    const code = codeOf(err);
    const refused = REFUSALS.has(code);
    emitLog(logger, refused ? 'warn' : 'error', refused ? 'project.revert.refused' : 'project.revert.failed', {
      workdir,
      durationMs: since(start),
      code,
      reason: isEntityGitError(err) && typeof err.data.reason === 'string' ? err.data.reason : null,
      message: messageOf(err),
    });
    throw err;
  }
}

const REFUSALS = new Set(['REVERT_CONFLICT', 'REVERT_REFUSED', 'NOT_AGENT_COMMIT', 'AGENT_COMMIT_NOT_FOUND']);
