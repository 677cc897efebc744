import { isEntityGitError, readChangeMarkers, type Difference } from '@entity-git/core';
import { messageOf } from '../cli-error.js';
import { requireSession, type Context } from '../context.js';
import { EXIT_DIFFERS, EXIT_OK, type ExitCode } from '../exit-codes.js';
import { printJson, println, type CliIo } from '../io.js';
import { printable } from '../printable.js';
import { differenceJson, type VerifyJson } from '../json-shapes.js';

export interface VerifyArgs {
  session?: string | undefined;
  json: boolean;
  /** Compare every session in full, not only those whose change marker moved. */
  full?: boolean;
}

/** `entity-git verify`: does every repository equal its DAG? Writes nothing. */
export async function runVerify(ctx: Context, io: CliIo, args: VerifyArgs): Promise<ExitCode> {
  if (args.session !== undefined) await requireSession(ctx, args.session);
  const ids = args.session !== undefined ? [args.session] : await ctx.dag.listSessions();
  const sessions: VerifyJson['sessions'] = [];
  const quick = args.full !== true;
  // Every session's marker in one read (the source's grouped query), before any is checked.
  const markers =
    quick && args.session === undefined ? await readChangeMarkers(ctx.dag) : new Map<string, string | null>();
  for (const sessionId of ids) {
    try {
      const r = await ctx.mirror.verify(
        sessionId,
        markers.has(sessionId) ? { quick, marker: markers.get(sessionId)! } : { quick },
      );
      sessions.push({ sessionId, ok: r.ok, differences: r.differences.map(differenceJson), error: null });
    } catch (err) {
      // A repository too damaged to read is a failed verification, not a crash of the command.
      const code = isEntityGitError(err) ? err.code : 'STORAGE_ERROR';
      sessions.push({ sessionId, ok: false, differences: [], error: { code, message: messageOf(err) } });
    }
  }
  const ok = sessions.every((s) => s.ok);
  if (args.json) {
    printJson(io, { ok, sessions, recognised: ctx.recognised } satisfies VerifyJson);
  } else {
    for (const s of sessions) {
      println(io, `${s.ok ? 'ok     ' : 'DIFFERS'} ${printable(s.sessionId)}`);
      if (s.error) println(io, `  error ${s.error.code}: ${s.error.message}`);
      for (const d of s.differences) println(io, `  ${describeDifference(d)}`);
    }
    const bad = sessions.filter((s) => !s.ok).length;
    println(
      io,
      `verified ${sessions.length} session${sessions.length === 1 ? '' : 's'}: ${sessions.length - bad} ok, ${bad} differ${bad === 1 ? 's' : ''}`,
    );
  }
  if (!ok) {
    const bad = sessions.filter((s) => !s.ok).map((s) => printable(s.sessionId));
    io.stderr.write(
      `entity-git: ${bad.length} of ${sessions.length} session${sessions.length === 1 ? '' : 's'} differ${bad.length === 1 ? 's' : ''} from the DAG: ${bad.join(', ')} (entity-git sync repairs them)\n`,
    );
    return EXIT_DIFFERS;
  }
  return EXIT_OK;
}

function describeDifference(d: ReturnType<typeof differenceJson> | Difference): string {
  const where = d.branch ? ` [${d.branch}]` : '';
  const values =
    (d.expected !== undefined && d.expected !== null) || (d.actual !== undefined && d.actual !== null)
      ? ` (expected ${d.expected ?? 'nothing'}, actual ${d.actual ?? 'nothing'})`
      : '';
  return `${d.kind}${where}: ${d.detail}${values}`;
}
