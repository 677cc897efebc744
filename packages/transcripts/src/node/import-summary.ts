import type { ImportReport } from './import-transcripts.js';

/** What an import did, session by session, in counts: what `entity-git import` prints at the end. */
export interface ImportSummary {
  /** Sessions read: synced ones and failed ones. */
  sessions: number;
  /** Sessions whose sync wrote a commit or moved a branch. */
  imported: number;
  /** Sessions synced that were already as their transcript says. */
  unchanged: number;
  /** Transcripts with a skipped line (their sessions were imported without it). */
  withWarnings: number;
  /** Transcripts, or sessions of them, that could not be imported. */
  failed: number;
  /** Sessions synced whose last turn is still open (being written), so not committed yet. */
  open: number;
  /** The failures, in the order met: the transcript, the session when it was read, the error's code (`ERROR` for one without). */
  failures: { path: string; sessionId: string | null; code: string }[];
}

/** The counts of an {@link ImportReport}. */
export function summarizeImport(report: ImportReport): ImportSummary {
  const imported = report.entries.filter((e) => e.result.commitsWritten > 0 || e.result.branchesMoved.length > 0);
  return {
    sessions: report.entries.length + report.failures.length,
    imported: imported.length,
    unchanged: report.entries.length - imported.length,
    withWarnings: new Set(report.warnings.map((w) => w.path)).size,
    failed: report.failures.length,
    open: report.entries.filter((e) => e.open).length,
    failures: report.failures.map((f) => ({ path: f.path, sessionId: f.sessionId ?? null, code: codeOf(f.error) })),
  };
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'ERROR';
}
