import { EntityGitError, type JsonValue } from '@entity-git/core';
import { lineValues } from './json-values.js';
import type { CompleteLines, RecordsRead, TranscriptWarning } from './parsed-session.js';

const NEWLINE = 0x0a;
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The complete lines of JSONL bytes: everything up to the last `\n`. A last line without its
 * newline is still being written by the agent (or was torn by a crash) and is left for later; it
 * is cut at a byte, never decoded half, so a code point split by the writer is never misread.
 * A line that is not UTF-8 text is `null` (the others are still read).
 */
export function completeLines(bytes: Uint8Array): CompleteLines {
  const end = bytes.lastIndexOf(NEWLINE) + 1;
  if (end === 0) return { lines: [], consumed: 0 };
  let lines: (string | null)[];
  try {
    lines = decoder.decode(bytes.subarray(0, end)).split('\n');
  } catch {
    // Rare: decode line by line so one bad line costs that line only.
    lines = [];
    for (let from = 0; from < end; ) {
      const nl = bytes.indexOf(NEWLINE, from);
      lines.push(decodeOrNull(bytes.subarray(from, nl)));
      from = nl + 1;
    }
    lines.push('');
  }
  lines.pop();
  return { lines: lines.map((l) => (l?.endsWith('\r') ? l.slice(0, -1) : l)), consumed: end };
}

function decodeOrNull(bytes: Uint8Array): string | null {
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

/** Options of {@link parseRecords} and {@link readJsonl}. */
export interface RecordsOptions {
  /** The 1-based number of the first line in the file, for messages (default 1). */
  firstLine?: number;
  /**
   * Refuse instead of skipping: the first line that is not exactly one JSON value (or, in a
   * finished transcript, a last line that is cut off) is `TRANSCRIPT_INVALID`. Default false.
   */
  strict?: boolean;
}

/**
 * Parses complete JSONL lines into records, skipping blank lines. A line holding several values
 * back to back (a writer that lost a newline) gives each of them; a line, or the part of it,
 * that is no JSON value is skipped with a warning (it will never become valid) — or, `strict`,
 * is `TRANSCRIPT_INVALID` with `data.line` (1-based).
 */
export function parseRecords(lines: readonly (string | null)[], options: RecordsOptions = {}): RecordsRead {
  const firstLine = options.firstLine ?? 1;
  const records: JsonValue[] = [];
  const warnings: TranscriptWarning[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const n = firstLine + i;
    if (line === null) {
      if (options.strict) throw new EntityGitError('TRANSCRIPT_INVALID', `line ${n} is not UTF-8 text`, { line: n });
      warnings.push(warning(n, 0, 'not-utf8', 'not UTF-8 text'));
      continue;
    }
    if (line.trim() === '') continue;
    if (options.strict) {
      records.push(strictLine(line, n));
      continue;
    }
    const { values, damage } = lineValues(line);
    records.push(...values);
    if (damage)
      warnings.push(
        warning(
          n,
          damage.at,
          damage.kind,
          damage.kind === 'cut-off' ? 'a record cut off' : `not JSON (${damage.detail})`,
        ),
      );
  }
  return { records, warnings };
}

function strictLine(line: string, n: number): JsonValue {
  try {
    return JSON.parse(line) as JsonValue;
  } catch (cause) {
    throw new EntityGitError(
      'TRANSCRIPT_INVALID',
      `line ${n} is not JSON: ${(cause as Error).message}`,
      { line: n },
      { cause },
    );
  }
}

function warning(line: number, at: number, reason: TranscriptWarning['reason'], what: string): TranscriptWarning {
  const column = at + 1;
  return {
    line,
    column,
    reason,
    warning: `line ${line}${column > 1 ? ` from column ${column}` : ''} skipped: ${what}`,
  };
}

/**
 * The last line of a finished transcript, which has no newline: read like any line, except that
 * a value it ends inside (or a code point split at its end) is a record the writer never
 * finished (`cut-off`). Strict, that is `TRANSCRIPT_INVALID`.
 */
export function lastLineRecords(tail: Uint8Array, line: number, options: RecordsOptions = {}): RecordsRead {
  const text = decodeOrNull(tail);
  if (text !== null && text.trim() === '') return { records: [], warnings: [] };
  const { values, damage } =
    text === null ? { values: [], damage: { at: 0, kind: 'cut-off' as const } } : lineValues(text);
  if (options.strict && (damage !== null || values.length !== 1))
    throw new EntityGitError(
      'TRANSCRIPT_INVALID',
      `line ${line}, the last (without its newline), is not one whole JSON value`,
      { line },
    );
  if (damage === null) return { records: values, warnings: [] };
  const what = damage.kind === 'cut-off' ? 'a record cut off (the last line, without its newline)' : 'not JSON';
  return { records: values, warnings: [warning(line, damage.at, damage.kind, what)] };
}

/** What {@link readJsonl} read: the complete lines' records, and the last line's when finished. */
export interface JsonlRead extends RecordsRead {
  /** Bytes the complete lines span (the last line without a newline is never counted). */
  consumed: number;
  /** How many complete lines were read. */
  lines: number;
  /** The records and warnings of the last line without its newline (none unless `finished`). */
  tail: RecordsRead;
}

/**
 * The records of JSONL bytes: the complete lines, and — when the transcript is `finished` — the
 * last line without its newline too (a finished writer that wrote no final newline, or a record a
 * crash tore, skipped with a warning).
 */
export function readJsonl(bytes: Uint8Array, options: RecordsOptions & { finished?: boolean } = {}): JsonlRead {
  const { lines, consumed } = completeLines(bytes);
  const read = parseRecords(lines, options);
  const tail =
    options.finished === true && consumed < bytes.length
      ? lastLineRecords(bytes.subarray(consumed), (options.firstLine ?? 1) + lines.length, options)
      : { records: [], warnings: [] };
  return { ...read, consumed, lines: lines.length, tail };
}

/** The newest time the records carry (`timestamp`, else `created_at`), in seconds; null when none does. */
export function latestTime(records: readonly JsonValue[]): number | null {
  let latest: number | null = null;
  for (const r of records) {
    const o = asObject(r);
    const t = o && (secondsOf(o.timestamp) ?? secondsOf(o.created_at));
    if (t !== null && t !== undefined && (latest === null || t > latest)) latest = t;
  }
  return latest;
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
