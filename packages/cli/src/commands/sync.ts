import { reconcile, type ReconcileAction, type ReconcileEntry } from '@entity-git/core';
import { requireSession, type Context } from '../context.js';
import { EXIT_DIFFERS, EXIT_OK, type ExitCode } from '../exit-codes.js';
import { printJson, println, type CliIo } from '../io.js';
import { syncEntryJson, untagged, type SyncJson } from '../json-shapes.js';
import { printable } from '../printable.js';
import { Progress } from '../progress.js';

export interface SyncArgs {
  session?: string | undefined;
  json: boolean;
  /** Compare every session in full, not only those whose change marker moved. */
  full?: boolean;
}

const ACTIONS: readonly ReconcileAction[] = ['unchanged', 'backfilled', 'empty', 'repaired', 'busy', 'failed'];

/** `entity-git sync`: reconcile every session (or one) with its repository. */
export async function runSync(ctx: Context, io: CliIo, args: SyncArgs): Promise<ExitCode> {
  if (args.session !== undefined) await requireSession(ctx, args.session);
  const sessions = args.session !== undefined ? [args.session] : await ctx.dag.listSessions();
  const progress = new Progress(args.json ? { ...io, isTTY: false } : io);
  if (!args.json && sessions.length > 0) progress.bar(0, sessions.length, sessions[0]!);
  const report = await reconcile({
    dag: ctx.dag,
    mirror: ctx.mirror,
    sessions,
    full: args.full === true,
    onProgress: (p) => {
      if (args.json) return;
      if (!progress.tty) progress.line(`${p.done}/${p.total} ${printable(p.sessionId)} ${describe(p)}`);
      else {
        if (p.action === 'failed') progress.line(`${printable(p.sessionId)} ${describe(p)}`);
        progress.bar(p.done, p.total, printable(p.sessionId));
      }
    },
  });
  progress.end();
  await (await import('./search.js')).indexAfterSync(io, ctx.root, report.entries);
  const counts = Object.fromEntries(ACTIONS.map((a) => [a, 0])) as Record<ReconcileAction, number>;
  for (const e of report.entries) counts[e.action]++;
  if (args.json) {
    const out: SyncJson = {
      ok: report.ok,
      total: report.total,
      counts,
      sessions: report.entries.map(syncEntryJson),
      recognised: ctx.recognised,
    };
    printJson(io, out);
  } else {
    const parts = ACTIONS.filter((a) => counts[a] > 0 || a === 'failed').map((a) => `${counts[a]} ${a}`);
    println(io, `synced ${report.total} session${report.total === 1 ? '' : 's'}: ${parts.join(', ')}`);
  }
  if (!report.ok) {
    const failed = report.entries.filter((e) => e.action === 'failed').map((e) => e.sessionId);
    io.stderr.write(
      `entity-git: ${failed.length} session${failed.length === 1 ? '' : 's'} failed to sync: ${failed.map(printable).join(', ')}\n`,
    );
    return EXIT_DIFFERS;
  }
  return EXIT_OK;
}

function describe(e: ReconcileEntry): string {
  if (e.action === 'failed')
    return `failed (${e.error?.code ?? 'ERROR'}: ${untagged(e.error?.message ?? 'unknown error')})`;
  if (e.action === 'busy') return `busy (${untagged(e.error?.message ?? 'another process is syncing it')})`;
  if (e.action === 'repaired') return `repaired (${[...new Set(e.differences.map((d) => d.kind))].join(', ')})`;
  return e.action;
}
