import { EntityGitError, type Mirror, type SyncResult } from '@entity-git/core';
import type { TranscriptDag } from '../transcript-dag.js';
import { TranscriptFile } from './transcript-file.js';

/** What one session's import did. */
export interface ImportEntry {
  sessionId: string;
  /** The transcript the session was read from. */
  path: string;
  nodes: number;
  result: SyncResult;
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
}

export interface ImportOptions {
  /** The transcripts; a path given instead of a file failed to open as one (e.g. a name too long for a session id) and is reported. */
  files: readonly (TranscriptFile | { path: string; error: unknown })[];
  /** A mirror over `dag` (e.g. `createNodeMirror({ dag, root })`). */
  mirror: Mirror;
  dag: TranscriptDag;
  /** Called after each session is synced. */
  onSession?: (entry: ImportEntry, done: number, total: number) => void;
}

/**
 * Reads what each file gained since the last call and mirrors the sessions that changed. A
 * session's commits are a pure function of its transcript's complete bytes, so importing again
 * is a no-op and a transcript that grew only adds commits. A file that cannot be read (or names
 * a session another file names: `TRANSCRIPT_INVALID`) is reported and skipped; the rest go on.
 */
export async function importTranscripts(options: ImportOptions): Promise<ImportReport> {
  const changed: { file: TranscriptFile; sessionId: string }[] = [];
  const failures: ImportFailure[] = [];
  const owner = new Map<string, string>();
  for (const file of options.files) {
    if (!(file instanceof TranscriptFile)) {
      failures.push({ path: file.path, error: file.error });
      continue;
    }
    try {
      const grew = await file.poll();
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
        if (!grew && options.dag.get(p.session.id) !== undefined) continue;
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
      const result = await options.mirror.sync(sessionId);
      const entry = { sessionId, path: file.path, nodes: options.dag.get(sessionId)!.nodes.length, result };
      entries.push(entry);
      options.onSession?.(entry, entries.length, changed.length);
    } catch (error) {
      failures.push({ path: file.path, sessionId, error });
    }
  }
  return { entries, failures };
}

export interface WatchOptions extends Omit<ImportOptions, 'files'> {
  /** The files to follow; called each round, so new transcripts join. */
  files: () => Promise<ImportOptions['files']>;
  /** Milliseconds between two polls of the files' sizes (default 500). */
  intervalMs?: number;
  signal: AbortSignal;
  /** Every round that synced or failed something. */
  onRound?: (report: ImportReport) => void;
}

/**
 * Follows growing transcripts until `signal` aborts: polls each file's size and time, reads the
 * appended complete lines and commits each turn once the transcript closes it. Polling rather
 * than `fs.watch`, whose events are not delivered on every file system (network mounts, some
 * containers); a stat per file per round is cheap. A failing file is reported each round it
 * changes and retried; the others go on.
 */
export async function watchTranscripts(options: WatchOptions): Promise<void> {
  const interval = options.intervalMs ?? 500;
  while (!options.signal.aborted) {
    let report: ImportReport;
    try {
      report = await importTranscripts({ ...options, files: await options.files() });
    } catch (error) {
      report = { entries: [], failures: [{ path: '', error }] };
    }
    if (report.entries.length > 0 || report.failures.length > 0) options.onRound?.(report);
    await new Promise<void>((done) => {
      const t = setTimeout(done, interval);
      options.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(t);
          done();
        },
        { once: true },
      );
    });
  }
}
