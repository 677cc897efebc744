import type { ImportEntry, ImportFailure, ImportSummary, ImportWarning } from '@entity-git/transcripts/node';
import { messageOf } from '../cli-error.js';

// The `--json` output of `import` (README "Import transcripts"): like every command's, fields are
// only ever added, and every field is always present (null when absent).

/** One session synced. */
export interface ImportSessionJson {
  session: string;
  path: string;
  nodes: number;
  commitsWritten: number;
  branchesMoved: string[];
  head: string | null;
  noop: boolean;
  /** Its last turn is still being written: not committed until the transcript closes it or goes quiet. */
  open: boolean;
}

/** One line skipped; the rest of its transcript was imported. */
export interface ImportWarningJson {
  path: string;
  session: string;
  line: number;
  column: number;
  reason: ImportWarning['reason'];
  message: string;
}

/** A transcript, or a session of one, that could not be imported. */
export interface ImportFailureJson {
  path: string;
  session: string | null;
  code: string;
  message: string;
}

/** The counts printed at the end of a one-shot import. */
export interface ImportSummaryJson {
  sessions: number;
  imported: number;
  unchanged: number;
  withWarnings: number;
  failed: number;
  open: number;
  failures: { path: string; session: string | null; code: string }[];
}

/** What `import --json` prints (without `--watch`). */
export interface ImportJson {
  ok: boolean;
  root: string;
  commitsWritten: number;
  sessions: ImportSessionJson[];
  failed: ImportFailureJson[];
  warnings: ImportWarningJson[];
  summary: ImportSummaryJson;
}

export function sessionJson(e: ImportEntry): ImportSessionJson {
  return {
    session: e.sessionId,
    path: e.path,
    nodes: e.nodes,
    commitsWritten: e.result.commitsWritten,
    branchesMoved: [...e.result.branchesMoved],
    head: e.result.head,
    noop: e.result.noop,
    open: e.open,
  };
}

export function warningJson(w: ImportWarning): ImportWarningJson {
  return { path: w.path, session: w.sessionId, line: w.line, column: w.column, reason: w.reason, message: w.warning };
}

export function failureJson(f: ImportFailure): ImportFailureJson {
  return { path: f.path, session: f.sessionId ?? null, code: codeOf(f.error), message: messageOf(f.error) };
}

export function summaryJson(s: ImportSummary): ImportSummaryJson {
  return {
    sessions: s.sessions,
    imported: s.imported,
    unchanged: s.unchanged,
    withWarnings: s.withWarnings,
    failed: s.failed,
    open: s.open,
    failures: s.failures.map((f) => ({ path: f.path, session: f.sessionId, code: f.code })),
  };
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'ERROR';
}
