import { resolve } from 'node:path';
import { diskUsage, pruneSessions, type DiskSize } from '@entity-git/node-fs';
import type { Context } from '../context.js';
import { EXIT_OK, type ExitCode } from '../exit-codes.js';
import { printJson, println, type CliIo } from '../io.js';

// prune and du: the repositories of sessions the application deleted go, after an archive if
// asked (docs/design.md, 'Retention and accounting'); du shows what each takes.

/** `prune --json` (docs/cli-json.md). */
export interface PruneJson {
  root: string;
  dryRun: boolean;
  /** The `--archive` directory, absolute, or null. */
  archive: string | null;
  pruned: { sessionId: string; dir: string; bytes: number; disk: number; archive: string | null }[];
  /** Repositories of sessions the DAG holds. */
  kept: number;
  /** The pruned repositories' sums (`disk`: what their removal freed, or would). */
  total: DiskSize;
  foreign: { name: string; reason: string }[];
}

/** `du --json` (docs/cli-json.md). */
export interface DuJson {
  root: string;
  /** Largest first. `inDag` false: the application deleted the session, `prune` removes it. */
  sessions: { sessionId: string; dir: string; inDag: boolean; bytes: number; disk: number }[];
  total: { sessions: number; bytes: number; disk: number };
  foreign: { name: string; reason: string }[];
}

/** A size as `du -h` writes it: 1024-based, one decimal under 10. */
export function humanSize(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} B` : `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}

export async function runPrune(
  ctx: Context,
  io: CliIo,
  args: { dryRun: boolean; archive: string | undefined; all: boolean; json: boolean },
): Promise<ExitCode> {
  const archive = args.archive === undefined ? undefined : resolve(io.cwd ?? process.cwd(), args.archive);
  const report = await pruneSessions({
    root: ctx.root,
    dag: ctx.dag,
    dryRun: args.dryRun,
    all: args.all,
    ...(archive === undefined ? {} : { archive }),
  });
  const total = report.pruned.reduce((t, p) => ({ bytes: t.bytes + p.size.bytes, disk: t.disk + p.size.disk }), {
    bytes: 0,
    disk: 0,
  });
  if (args.json) {
    printJson(io, {
      root: report.root,
      dryRun: report.dryRun,
      archive: archive ?? null,
      pruned: report.pruned.map((p) => ({
        sessionId: p.sessionId,
        dir: p.path,
        bytes: p.size.bytes,
        disk: p.size.disk,
        archive: p.archive,
      })),
      kept: report.kept,
      total,
      foreign: report.foreign,
    } satisfies PruneJson);
    return EXIT_OK;
  }
  for (const p of report.pruned) {
    const what = `${p.name} (session ${JSON.stringify(p.sessionId)}, ${humanSize(p.size.disk)})`;
    if (report.dryRun) println(io, `would ${archive === undefined ? '' : 'archive and '}remove ${what}`);
    else println(io, `${p.archive === null ? 'removed' : `archived to ${p.archive}, removed`} ${what}`);
  }
  const n = report.pruned.length;
  println(
    io,
    `${report.dryRun ? 'would prune' : 'pruned'} ${n} session${n === 1 ? '' : 's'} the database no longer holds (${humanSize(total.disk)}), kept ${report.kept}${report.dryRun ? ' (dry run: nothing changed)' : ''}`,
  );
  return EXIT_OK;
}

export async function runDu(ctx: Context, io: CliIo, args: { json: boolean }): Promise<ExitCode> {
  const report = await diskUsage(ctx.root);
  const live = new Set(await ctx.dag.listSessions());
  if (args.json) {
    printJson(io, {
      root: report.root,
      sessions: report.sessions.map((s) => ({
        sessionId: s.sessionId,
        dir: s.path,
        inDag: live.has(s.sessionId),
        bytes: s.bytes,
        disk: s.disk,
      })),
      total: { sessions: report.sessions.length, ...report.total },
      foreign: report.foreign,
    } satisfies DuJson);
    return EXIT_OK;
  }
  const width = Math.max(
    0,
    ...report.sessions.map((s) => humanSize(s.disk).length),
    humanSize(report.total.disk).length,
  );
  for (const s of report.sessions)
    println(
      io,
      `${humanSize(s.disk).padStart(width)}  ${s.sessionId}${live.has(s.sessionId) ? '' : '  (deleted from the database: entity-git prune removes it)'}`,
    );
  const n = report.sessions.length;
  println(
    io,
    `${humanSize(report.total.disk).padStart(width)}  total, ${n} session${n === 1 ? '' : 's'} under ${report.root}`,
  );
  return EXIT_OK;
}
