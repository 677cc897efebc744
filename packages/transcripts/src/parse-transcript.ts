import { EntityGitError } from '@entity-git/core';
import { parseClaudeCode } from './claude-code.js';
import { parseCodex } from './codex.js';
import { completeLines, parseRecords } from './jsonl.js';
import { parseMessages, readMessages } from './messages.js';
import type { ParsedSession } from './parsed-session.js';

export const TRANSCRIPT_FORMATS = ['claude-code', 'codex', 'messages'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

/**
 * The sessions of a transcript's bytes, from its complete part only: the same bytes give the same
 * sessions (and so the same commit ids) in Node and in the browser.
 */
export function parseTranscript(bytes: Uint8Array, format: TranscriptFormat, sessionId: string): ParsedSession[] {
  if (format === 'claude-code') return parseClaudeCode(parseRecords(completeLines(bytes).lines), { sessionId });
  if (format === 'codex') return [parseCodex(parseRecords(completeLines(bytes).lines), { sessionId })];
  if (format === 'messages') return [parseMessages(readMessages(bytes), { sessionId })];
  throw new EntityGitError(
    'INVALID_ARGUMENT',
    `unknown transcript format ${JSON.stringify(format)}: expected ${TRANSCRIPT_FORMATS.join(', ')}`,
  );
}
