import type { DagNode, JsonValue, Session } from '@entity-git/core';

/**
 * One session read from a transcript: its row and its nodes in seq order. A pure function of the
 * records of the file and of whether it is finished, so two machines reading the same bytes
 * build the same DAG.
 */
export interface ParsedSession {
  session: Session;
  nodes: DagNode[];
}

/** What every transcript parser takes. */
export interface TranscriptOptions {
  /**
   * The session id; the CLI passes the file's name without its extension (a Claude Code file is
   * named after its session).
   */
  sessionId: string;
  /**
   * The writer is done with the file (decided by the caller, e.g. after a quiet time): every step
   * is closed, marked or not, so the session's last turn is committed. Default false: a step is
   * closed only by the transcript's own marks (a final stop reason, a turn-end record or event).
   */
  finished?: boolean;
}

/** Where a transcript's lines were cut: the complete lines and the byte count they span. */
export interface CompleteLines {
  /** Each complete line (without its `\n`), empty lines included, in file order; `null` for a line that is not UTF-8 text. */
  lines: (string | null)[];
  /** Bytes of the input the complete lines span, their newlines included. */
  consumed: number;
}

/** A line, or the part of one, that was skipped: the rest of the transcript was read. */
export interface TranscriptWarning {
  /** The line, 1-based. */
  line: number;
  /** Where the skipped part begins on the line, 1-based (UTF-16 code units); 1 when the whole line was skipped. */
  column: number;
  /**
   * `not-json`: no JSON value starts there (garbage, or text after a damaged record); `cut-off`:
   * the line ends inside a record (a write torn by a crash); `not-utf8`: the line is not UTF-8 text.
   */
  reason: 'not-json' | 'cut-off' | 'not-utf8';
  /** A sentence for people: `line 196 skipped: not JSON (…)`. */
  warning: string;
}

/** Records read from lines, and the lines (or parts) skipped. */
export interface RecordsRead {
  records: JsonValue[];
  warnings: TranscriptWarning[];
}

/** What {@link parseTranscript} read from a transcript's bytes. */
export interface TranscriptParse {
  /** The sessions, the file's own first (a Claude Code file's sidechains follow it). */
  sessions: ParsedSession[];
  /** The lines skipped, in file order (none when `strict`: it refuses instead). */
  warnings: TranscriptWarning[];
}
