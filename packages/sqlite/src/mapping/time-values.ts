import { EntityGitError } from '@entity-git/core';

/**
 * How a time column is stored: seconds since the epoch (`s`, the default), milliseconds (`ms`),
 * or text (`text`: ISO 8601, or SQL's `YYYY-MM-DD HH:MM:SS[.fff]`, which is UTC, as SQLite's
 * `CURRENT_TIMESTAMP` writes it). A SQL timestamp type (a `Date` from the driver) is read as
 * what it is, whatever the format says.
 */
export type TimeFormat = 's' | 'ms' | 'text';

export const TIME_FORMATS: readonly TimeFormat[] = ['s', 'ms', 'text'];

const SQL_TEXT = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)$/;

/**
 * A time read from a row, in seconds since the epoch (fractions kept), or null for SQL NULL;
 * a value that is no time is a `DB_ERROR` naming what was read (`where`).
 */
export function secondsOf(raw: unknown, format: TimeFormat, where: string): number | null {
  if (raw === null || raw === undefined) return null;
  if (raw instanceof Date) return finite(raw.getTime() / 1000, raw, where);
  if (typeof raw === 'bigint') raw = Number(raw);
  if (typeof raw === 'string' && format !== 'text' && /^-?\d+(\.\d+)?$/.test(raw.trim())) raw = Number(raw);
  if (typeof raw === 'number') return finite(format === 'ms' ? raw / 1000 : raw, raw, where);
  if (typeof raw === 'string') {
    const text = raw.trim();
    const sqlText = SQL_TEXT.exec(text);
    // SQL text carries no zone: it is UTC, as SQLite's CURRENT_TIMESTAMP and datetime() write it.
    const ms = Date.parse(sqlText === null ? text : `${sqlText[1]}T${sqlText[2]}Z`);
    return finite(ms / 1000, raw, where);
  }
  return finite(Number.NaN, raw, where);
}

function finite(seconds: number, raw: unknown, where: string): number {
  if (Number.isFinite(seconds)) return seconds;
  throw new EntityGitError(
    'DB_ERROR',
    `[sqlite] ${where} is ${JSON.stringify(String(raw))}, which is no time (a number of seconds or milliseconds, ISO or SQL text, a timestamp)`,
    { value: String(raw) },
  );
}
