import { EntityGitError } from '@entity-git/core';
import { parseClaudeCode } from './claude-code.js';
import { parseCodex } from './codex.js';
import { parseGemini, readGemini } from './gemini.js';
import { readJsonl } from './jsonl.js';
import { parseMessages, readMessages } from './messages.js';
import type { TranscriptParse } from './parsed-session.js';

export const TRANSCRIPT_FORMATS = ['claude-code', 'codex', 'gemini', 'messages'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

/** How {@link parseTranscript} reads a transcript. */
export interface ParseOptions {
  /**
   * The writer is done with the file — decided by the caller (the Node importer: after a quiet
   * time), never by the parser, so the same bytes and the same answer give the same DAG. A
   * finished transcript's last turns are committed even when nothing in the file closed them,
   * and its last line is read even without a newline. Default false.
   */
  finished?: boolean;
  /** Refuse (`TRANSCRIPT_INVALID`) a line that would be skipped with a warning. Default false. */
  strict?: boolean;
}

/**
 * The sessions of a transcript's bytes: the same bytes (and options) give the same sessions, and
 * so the same commit ids, in Node and in the browser. A damaged line costs that line only: it is
 * skipped and named in `warnings` (unless `strict`).
 */
export function parseTranscript(
  bytes: Uint8Array,
  format: TranscriptFormat,
  sessionId: string,
  options: ParseOptions = {},
): TranscriptParse {
  const finished = options.finished === true;
  if (format === 'messages') {
    const { messages, warnings } = readMessages(bytes, options);
    return { sessions: [parseMessages(messages, { sessionId, finished })], warnings };
  }
  if (format === 'gemini') {
    const { records, warnings } = readGemini(bytes, options);
    return { sessions: [parseGemini(records, { sessionId, finished })], warnings };
  }
  if (format !== 'claude-code' && format !== 'codex')
    throw new EntityGitError(
      'INVALID_ARGUMENT',
      `unknown transcript format ${JSON.stringify(format)}: expected ${TRANSCRIPT_FORMATS.join(', ')}`,
    );
  const read = readJsonl(bytes, options);
  const records = [...read.records, ...read.tail.records];
  const warnings = [...read.warnings, ...read.tail.warnings];
  return format === 'claude-code'
    ? { sessions: parseClaudeCode(records, { sessionId, finished }), warnings }
    : { sessions: [parseCodex(records, { sessionId, finished })], warnings };
}
