import {
  EXPORT_FORMATS,
  type ExportFormat,
  exportSession,
  Redactor,
  repositoryAt,
  type SecretFinding,
  scanRepository,
} from '@entity-git/core';
import { nodeStorage } from '@entity-git/node-fs';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ParsedArgs } from '../args.js';
import { CliError } from '../cli-error.js';
import { type Context, requireRepository, requireSession } from '../context.js';
import { EXIT_DIFFERS, EXIT_OK, EXIT_USAGE, type ExitCode } from '../exit-codes.js';
import { type CliIo, printJson, println } from '../io.js';
import { printable } from '../printable.js';

/** What `scan --json` prints. */
export interface ScanJson {
  ok: boolean;
  /** Repositories scanned. */
  repositories: number;
  findings: SecretFinding[];
}

/**
 * The repositories `scan` reads: the session's, or every directory under the root that holds a
 * repository — sessions the DAG no longer has included, since their history may still be pushed.
 */
function repositoriesOf(ctx: Context, session: string | undefined): { dir: string; name: string }[] {
  if (session !== undefined) return [{ dir: ctx.mirror.repoPath(session), name: session }];
  if (!existsSync(ctx.root)) return [];
  return readdirSync(ctx.root)
    .sort()
    .map((name) => ({ dir: join(ctx.root, name), name }))
    .filter((r) => existsSync(join(r.dir, '.git', 'HEAD')));
}

/** `entity-git scan`: every secret the repositories hold, in every commit of every branch; exit 1 when any. */
export async function runScan(
  ctx: Context,
  io: CliIo,
  args: { session?: string | undefined; json: boolean },
): Promise<ExitCode> {
  if (args.session !== undefined) await requireRepository(ctx, args.session);
  const redaction = ctx.config.redaction;
  const redactor = new Redactor(redaction === undefined || redaction === false ? {} : redaction);
  const storage = nodeStorage();
  const repos = repositoriesOf(ctx, args.session);
  const findings: SecretFinding[] = [];
  for (const r of repos) findings.push(...(await scanRepository(repositoryAt(storage, r.dir, r.name), redactor)));
  if (args.json) printJson(io, { ok: findings.length === 0, repositories: repos.length, findings } satisfies ScanJson);
  else {
    for (const f of findings)
      println(io, `${f.rule}\t${printable(f.session)}\t${f.commit}\t${f.file ?? '(commit message)'}:${f.line}`);
    println(
      io,
      `scanned ${repos.length} repositor${repos.length === 1 ? 'y' : 'ies'}: ${findings.length === 0 ? 'no secret found' : `${findings.length} secret${findings.length === 1 ? '' : 's'} found`}`,
    );
  }
  return findings.length === 0 ? EXIT_OK : EXIT_DIFFERS;
}

/** `entity-git export SESSION --format md|html|jsonl`: a branch as a file, to stdout or `--output`. */
export async function runExport(
  ctx: Context,
  io: CliIo,
  args: { session: string; values: ParsedArgs['values'] },
): Promise<ExitCode> {
  const v = args.values;
  const format = v.format as ExportFormat | undefined;
  if (format === undefined || !EXPORT_FORMATS.includes(format))
    throw new CliError(`export: --format must be one of ${EXPORT_FORMATS.join(', ')}`, EXIT_USAGE);
  const turn = v.turn === undefined ? undefined : Number(v.turn);
  if (turn !== undefined && !(Number.isSafeInteger(turn) && turn >= 1))
    throw new CliError(`export: --turn must be a whole number from 1, got ${JSON.stringify(v.turn)}`, EXIT_USAGE);
  const session = await requireSession(ctx, args.session);
  await requireRepository(ctx, args.session);
  const redaction = ctx.config.redaction;
  const text = await exportSession(ctx.mirror, args.session, {
    format,
    session,
    ...(v.branch === undefined ? {} : { branch: v.branch }),
    ...(turn === undefined ? {} : { turn }),
    ...(v['commit-url'] === undefined ? {} : { commitUrl: v['commit-url'] }),
    ...(redaction === undefined ? {} : { redaction }),
  });
  if (v.output === undefined) io.stdout.write(text);
  else writeFileSync(resolve(io.cwd ?? process.cwd(), v.output), text);
  return EXIT_OK;
}
