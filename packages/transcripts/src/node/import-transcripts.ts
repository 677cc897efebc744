import { EntityGitError, type Logger, type Mirror, type SyncResult } from '@entity-git/core';
import type { TranscriptWarning } from '../parsed-session.js';
import { syncTranscript } from '../sync-transcript.js';
import type { TranscriptDag } from '../transcript-dag.js';
import { type PollOptions, TranscriptFile } from './transcript-file.js';

/** What one session's import did. */
export interface ImportEntry {
  sessionId: string;
  /** The transcript the session was read from. */
  path: string;
  nodes: number;
  /** The session's last turn is still open (being written): committed once the transcript closes it or goes quiet. */
  open: boolean;
  result: SyncResult;
}

/** A line of a transcript that was skipped; the rest of it was imported. */
export interface ImportWarning extends TranscriptWarning {
  /** The transcript. */
  path: string;
  /** The session the file stands for (its name); a Claude Code file's sidechains are in it too. */
  sessionId: string;
}

/** A transcript, or one of its sessions, that could not be imported; the others were. */
export interface ImportFailure {
  path: string;
  /** Set when the file was read and the session's sync failed. */
  sessionId?: string;
  error: unknown;
}

export interface ImportReport {
  entries: ImportEntry[];
  failures: ImportFailure[];
  /** Lines skipped, by file then line: each when its line is first read (a finished transcript's cut last line, each time it is read again). */
  warnings: ImportWarning[];
}

export interface ImportOptions {
  /** The transcripts; a path given instead of a file failed to open as one (e.g. a name too long for a session id) and is reported. */
  files: readonly (TranscriptFile | { path: string; error: unknown })[];
  /** A mirror over `dag` (e.g. `createNodeMirror({ dag, root })`). */
  mirror: Mirror;
  dag: TranscriptDag;
  /** Called after each session is synced. */
  onSession?: (entry: ImportEntry, done: number, total: number) => void;
  /**
   * Milliseconds after which a quiet transcript is finished and its last turn committed even
   * though nothing in it closed that turn (default 5 minutes; `0`: every transcript is finished;
   * `Infinity`: never by time). See {@link PollOptions.quietMs} for what "quiet" is measured from.
   */
  quietMs?: number;
  /** What a transcript read for the first time has been quiet since ({@link PollOptions.quietSince}); `watchTranscripts` sets `write`. */
  quietSince?: PollOptions['quietSince'];
  /** Refuse a transcript with a damaged line (a failure, `TRANSCRIPT_INVALID`) instead of skipping the line. Default false. */
  strict?: boolean;
  /** The clock, ms since the epoch (default `Date.now`). */
  now?: () => number;
  /** Where each skipped line is also reported, as `transcript.line-skipped` (warn). Default: none. */
  logger?: Logger;
}

/**
 * Reads what each file gained since the last call and mirrors the sessions that changed. A
 * session's commits are a pure function of its transcript's bytes and of whether it is
 * finished (quiet for `quietMs`), so importing again is a no-op. A transcript that grew adds
 * commits; one that grew after its last turn was committed as finished has that turn committed
 * again (its branch moves, the reflog keeps the old commit). A damaged line is skipped and
 * reported in `warnings`; a file that cannot be read (or names a session another file names:
 * `TRANSCRIPT_INVALID`) is reported in `failures` and skipped; the rest go on.
 */
export async function importTranscripts(options: ImportOptions): Promise<ImportReport> {
  const changed: { file: TranscriptFile; sessionId: string }[] = [];
  const failures: ImportFailure[] = [];
  const warnings: ImportWarning[] = [];
  const owner = new Map<string, string>();
  const poll = { quietMs: options.quietMs, quietSince: options.quietSince, strict: options.strict === true };
  for (const file of options.files) {
    if (!(file instanceof TranscriptFile)) {
      failures.push({ path: file.path, error: file.error });
      continue;
    }
    try {
      const polled = await file.poll({ ...poll, now: (options.now ?? Date.now)() });
      for (const w of polled.warnings) {
        const warning = { ...w, path: file.path, sessionId: file.sessionId };
        warnings.push(warning);
        options.logger?.warn('transcript.line-skipped', {
          path: warning.path,
          session: warning.sessionId,
          line: w.line,
          column: w.column,
          reason: w.reason,
          warning: w.warning,
        });
      }
      for (const p of file.parsed) {
        const other = owner.get(p.session.id);
        if (other !== undefined && other !== file.path) {
          throw new EntityGitError(
            'TRANSCRIPT_INVALID',
            `${file.path} and ${other} are both session ${JSON.stringify(p.session.id)}`,
            { sessionId: p.session.id },
          );
        }
        owner.set(p.session.id, file.path);
      }
      for (const p of file.parsed) {
        if (!polled.changed && options.dag.get(p.session.id) !== undefined) continue;
        options.dag.set(p);
        if (p.nodes.length > 0) changed.push({ file, sessionId: p.session.id });
      }
    } catch (error) {
      failures.push({ path: file.path, error });
    }
  }
  const entries: ImportEntry[] = [];
  for (const { file, sessionId } of changed) {
    try {
      const parsed = options.dag.get(sessionId)!;
      const result = await syncTranscript(options.mirror, parsed);
      const open = parsed.nodes.some((n) => (n.metadata as { pending?: unknown } | null)?.pending === true);
      const entry = { sessionId, path: file.path, nodes: parsed.nodes.length, open, result };
      entries.push(entry);
      options.onSession?.(entry, entries.length, changed.length);
    } catch (error) {
      failures.push({ path: file.path, sessionId, error });
    }
  }
  return { entries, failures, warnings };
}

export interface WatchOptions extends Omit<ImportOptions, 'files'> {
  /** The files to follow; called each round, so new transcripts join. */
  files: () => Promise<ImportOptions['files']>;
  /** Milliseconds between two polls of the files' sizes (default 500). */
  intervalMs?: number;
  signal: AbortSignal;
  /** Every round that synced, skipped or failed something. */
  onRound?: (report: ImportReport) => void;
}

/**
 * Follows growing transcripts until `signal` aborts: polls each file's size and time, reads the
 * appended complete lines and commits each turn once the transcript closes it, or once the file
 * has not grown for `quietMs` (a turn that then grows after all is committed again). Polling rather
 * than `fs.watch`, whose events are not delivered on every file system (network mounts, some
 * containers); a stat per file per round is cheap. A failing file is reported each round it
 * changes and retried; the others go on.
 */
export async function watchTranscripts(options: WatchOptions): Promise<void> {
  const interval = options.intervalMs ?? 500;
  while (!options.signal.aborted) {
    let report: ImportReport;
    try {
      report = await importTranscripts({ quietSince: 'write', ...options, files: await options.files() });
    } catch (error) {
      report = { entries: [], failures: [{ path: '', error }], warnings: [] };
    }
    if (report.entries.length > 0 || report.failures.length > 0 || report.warnings.length > 0)
      options.onRound?.(report);
    await new Promise<void>((done) => {
      // The listener goes with its round: one left per round would pile up on the signal.
      const wake = () => {
        clearTimeout(t);
        done();
      };
      const t = setTimeout(() => {
        options.signal.removeEventListener('abort', wake);
        done();
      }, interval);
      options.signal.addEventListener('abort', wake, { once: true });
    });
  }
}
