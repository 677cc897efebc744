import { EntityGitError, type JsonValue } from '@entity-git/core';
import type { CompleteLines } from './parsed-session.js';

const NEWLINE = 0x0a;
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The complete lines of JSONL bytes: everything up to the last `\n`. A last line without its
 * newline is still being written by the agent (or was torn by a crash) and is left for later; it
 * is cut at a byte, never decoded half, so a code point split by the writer is never misread.
 */
export function completeLines(bytes: Uint8Array): CompleteLines {
  const end = bytes.lastIndexOf(NEWLINE) + 1;
  if (end === 0) return { lines: [], consumed: 0 };
  let text: string;
  try {
    text = decoder.decode(bytes.subarray(0, end));
  } catch (cause) {
    throw new EntityGitError('TRANSCRIPT_INVALID', 'the transcript is not UTF-8 text', {}, { cause });
  }
  const lines = text.split('\n');
  lines.pop();
  return { lines: lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l)), consumed: end };
}

/**
 * Parses complete JSONL lines into records, skipping blank lines. A complete line that is not
 * JSON is an error (`TRANSCRIPT_INVALID`, `data.line` 1-based): it will never become valid.
 * @param firstLine - the 1-based number of `lines[0]` in the file, for messages.
 */
export function parseRecords(lines: readonly string[], firstLine = 1): JsonValue[] {
  const out: JsonValue[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line) as JsonValue);
    } catch (cause) {
      throw new EntityGitError(
        'TRANSCRIPT_INVALID',
        `line ${firstLine + i} is not JSON: ${(cause as Error).message}`,
        { line: firstLine + i },
        { cause },
      );
    }
  }
  return out;
}

/** A record as an object, or null when it is not one. */
export function asObject(v: JsonValue | undefined): { [key: string]: JsonValue } | null {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : null;
}

export const asString = (v: JsonValue | undefined): string | null => (typeof v === 'string' ? v : null);

/** Seconds since the epoch from an ISO date or a number of seconds; null when absent or unreadable. */
export function secondsOf(v: JsonValue | undefined): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v > 1e12 ? v / 1000 : v;
  if (typeof v !== 'string') return null;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms / 1000 : null;
}
