import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_IDENTITY, LAYOUTS, type Layout } from '@entity-git/core';
import { createNodeMirror, defaultRoot } from '@entity-git/node-fs';
import { TranscriptDag, type TranscriptFormat } from '@entity-git/transcripts';
import {
  defaultClaudeProjectsDir,
  defaultCodexSessionsDir,
  defaultGeminiDir,
  findGeminiSessions,
  findTranscripts,
  importTranscripts,
  DEFAULT_QUIET_MS,
  summarizeImport,
  TranscriptFile,
  watchTranscripts,
  type ImportEntry,
  type ImportFailure,
  type ImportOptions,
  type ImportReport,
  type ImportWarning,
} from '@entity-git/transcripts/node';
import type { ParsedArgs } from '../args.js';
import { CliError, exitCodeOf, messageOf } from '../cli-error.js';
import { parseIdentity } from '../context.js';
import { parseDuration } from '../duration.js';
import { EXIT_DIFFERS, EXIT_OK, EXIT_USAGE, EXIT_WARNINGS, type ExitCode } from '../exit-codes.js';
import { printJson, println, type CliIo } from '../io.js';
import { Progress } from '../progress.js';
import { failureJson, type ImportJson, sessionJson, summaryJson, warningJson } from './import-json.js';

export interface ImportArgs {
  format: TranscriptFormat;
  /** claude-code: at most one DIR; messages: the files. */
  paths: string[];
  values: ParsedArgs['values'];
  /** Aborts `--watch` (tests); SIGINT and SIGTERM also stop it. */
  signal?: AbortSignal;
}

/** `entity-git import claude-code|codex|messages`: transcripts on disk → session repositories. */
export async function runImport(io: CliIo, args: ImportArgs): Promise<ExitCode> {
  const { values } = args;
  if (values.db !== undefined) throw new CliError('import reads transcripts, not a database: it takes no --db');
  const cwd = io.cwd ?? process.cwd();
  const root = resolve(cwd, values.root ?? defaultRoot());
  if (values.layout !== undefined && !(LAYOUTS as readonly string[]).includes(values.layout)) {
    throw new CliError(
      `--layout must be one of ${LAYOUTS.join(', ')}, got ${JSON.stringify(values.layout)}`,
      EXIT_USAGE,
    );
  }
  const identity = values.identity === undefined ? DEFAULT_IDENTITY : parseIdentity(values.identity);
  const quiet = values['quiet-time'];
  const reading = {
    quietMs: quiet === undefined ? DEFAULT_QUIET_MS : parseDuration(quiet, '--quiet-time'),
    strict: values.strict === true,
  };
  const dag = new TranscriptDag();
  const mirror = createNodeMirror({
    dag,
    root,
    identity,
    ...(values.layout ? { layout: values.layout as Layout } : {}),
  });
  const files = await fileSource(args, cwd);
  const json = values.json === true;

  if (values.watch === true) {
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    args.signal?.addEventListener('abort', onSignal, { once: true });
    if (!json) println(io, `watching ${args.format} transcripts; repositories under ${root} (Ctrl-C stops)`);
    try {
      await watchTranscripts({
        dag,
        mirror,
        files,
        ...reading,
        signal: stop.signal,
        onRound: (report) => {
          for (const w of report.warnings) {
            if (json) io.stdout.write(`${JSON.stringify({ warning: warningJson(w) })}\n`);
            else io.stderr.write(`entity-git: ${warningLine(w)}\n`);
          }
          for (const e of report.entries) {
            if (json) io.stdout.write(`${JSON.stringify(sessionJson(e))}\n`);
            else if (!e.result.noop) println(io, `${e.sessionId}: ${describe(e)}`);
          }
          for (const f of report.failures) io.stderr.write(`entity-git: ${failureLine(f)}\n`);
        },
      });
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    return EXIT_OK;
  }

  const progress = new Progress(json ? { ...io, isTTY: false } : io);
  const report = await importTranscripts({
    dag,
    mirror,
    files: await files(),
    ...reading,
    onSession: (e, done, total) => {
      if (json) return;
      if (progress.tty) progress.bar(done, total, e.sessionId);
      else progress.line(`${done}/${total} ${e.sessionId} ${describe(e)}`);
    },
  });
  progress.end();
  return finish(io, report, root, json);
}

function finish(io: CliIo, report: ImportReport, root: string, json: boolean): ExitCode {
  const commits = report.entries.reduce((sum, e) => sum + e.result.commitsWritten, 0);
  const summary = summarizeImport(report);
  if (json) {
    const out: ImportJson = {
      ok: report.failures.length === 0,
      root,
      commitsWritten: commits,
      sessions: report.entries.map(sessionJson),
      failed: report.failures.map(failureJson),
      warnings: report.warnings.map(warningJson),
      summary: summaryJson(summary),
    };
    printJson(io, out);
  } else {
    const n = report.entries.length;
    println(
      io,
      `imported ${n} session${n === 1 ? '' : 's'} into ${root}: ${commits} commit${commits === 1 ? '' : 's'} written`,
    );
    for (const w of report.warnings) io.stderr.write(`entity-git: ${warningLine(w)}\n`);
  }
  for (const f of report.failures) io.stderr.write(`entity-git: ${failureLine(f)}\n`);
  if (!json) {
    io.stderr.write(
      `summary: ${summary.sessions} session${summary.sessions === 1 ? '' : 's'}: ${summary.imported} imported, ` +
        `${summary.unchanged} unchanged, ${summary.withWarnings} with warnings, ${summary.failed} failed, ` +
        `${summary.open} still being written\n`,
    );
    for (const f of summary.failures)
      io.stderr.write(`failed: ${f.path}${f.sessionId === null ? '' : ` (session ${f.sessionId})`}: ${f.code}\n`);
  }
  if (report.failures.length === 0) return report.warnings.length === 0 ? EXIT_OK : EXIT_WARNINGS;
  // Only bad transcripts: the user's input (2); a git or disk failure is 3; both: the worst.
  return report.failures.reduce<ExitCode>((worst, f) => Math.max(worst, exitCodeOf(f.error)) as ExitCode, EXIT_DIFFERS);
}

/** The transcripts to read, listed again each `--watch` round so new sessions join. */
async function fileSource(args: ImportArgs, cwd: string): Promise<() => Promise<ImportOptions['files']>> {
  const known = new Map<string, TranscriptFile>();
  const keep = (path: string) => {
    let f = known.get(path);
    try {
      if (!f) known.set(path, (f = new TranscriptFile(path, args.format)));
    } catch (error) {
      return { path, error };
    }
    return f;
  };
  if (args.format === 'messages') {
    if (args.paths.length === 0)
      throw new CliError('import messages: missing FILE (see: entity-git import messages --help)');
    const paths = args.paths.map((p) => resolve(cwd, p));
    for (const p of paths) if (!existsSync(p) && args.values.watch !== true) throw new CliError(`no file ${p}`);
    return async () => paths.filter((p) => existsSync(p)).map(keep);
  }
  const where = DIRECTORIES[args.format];
  const dir = resolve(cwd, args.paths[0] ?? where.default());
  if (!existsSync(dir))
    throw new CliError(`no directory ${dir}${args.paths[0] === undefined ? ' (the default; pass DIR)' : ''}`);
  return async () => (await where.find(dir)).map(keep);
}

/** Where each format's transcripts are by default, and how they are found under a directory. */
const DIRECTORIES = {
  'claude-code': { default: defaultClaudeProjectsDir, find: findTranscripts },
  codex: { default: defaultCodexSessionsDir, find: findTranscripts },
  gemini: { default: defaultGeminiDir, find: findGeminiSessions },
} as const;

function describe(e: ImportEntry): string {
  if (e.result.noop) return 'unchanged';
  const c = e.result.commitsWritten;
  const open = e.open ? '; its last turn is still being written' : '';
  return `${c} commit${c === 1 ? '' : 's'} (${e.nodes} messages, HEAD ${e.result.head ?? 'none'}${open})`;
}

function warningLine(w: ImportWarning): string {
  return `warning: ${w.path}: ${w.warning}`;
}

function failureLine(f: ImportFailure): string {
  return `${f.path}${f.sessionId ? ` (session ${f.sessionId})` : ''}: ${messageOf(f.error)}`;
}
