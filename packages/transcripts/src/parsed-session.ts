import type { DagNode, Session } from '@entity-git/core';

/**
 * One session read from a transcript: its row and its nodes in seq order. A pure function of the
 * complete records of the file, so two machines reading the same bytes build the same DAG.
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
}

/** Where a transcript's lines were cut: the complete lines and the byte count they span. */
export interface CompleteLines {
  /** Each complete line (without its `\n`), empty lines included, in file order. */
  lines: string[];
  /** Bytes of the input the complete lines span, their newlines included. */
  consumed: number;
}
