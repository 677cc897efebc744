/**
 * An ISO 8601 date-time as the databases print it: `2026-05-01T12:00:00.123Z` (what libSQL rows
 * hold), `2026-05-01 12:00:00.123456` and `… +00` / `+05:30` (PostgreSQL's text forms).
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * Seconds since the epoch of a stored time, or null when it is none.
 *
 * - A `Date` is the instant it holds, unless `wallClock`: a PostgreSQL `timestamp` without a
 *   zone, which the `pg` driver turns into a Date in the reading process's zone; its fields are
 *   then read as UTC, so the value does not depend on the zone of the machine that mirrors.
 * - Text is read with its fractional digits (microseconds included); without a zone it is UTC,
 *   for the same reason (Mastra writes `toISOString()`, always `Z`).
 * - A number is milliseconds, as `new Date(n)` (what Mastra does with a stored time) reads it.
 */
export function storedSeconds(value: unknown, wallClock = false): number | null {
  if (value instanceof Date) {
    const ms = value.getTime();
    if (!Number.isFinite(ms)) return null;
    if (!wallClock) return ms / 1000;
    const utc = Date.UTC(
      value.getFullYear(),
      value.getMonth(),
      value.getDate(),
      value.getHours(),
      value.getMinutes(),
      value.getSeconds(),
      value.getMilliseconds(),
    );
    return utc / 1000;
  }
  if (typeof value === 'number') return Number.isFinite(value) ? value / 1000 : null;
  if (typeof value !== 'string') return null;
  const m = DATE_TIME.exec(value.trim());
  if (m === null) {
    const ms = Date.parse(value);
    return Number.isFinite(ms) ? ms / 1000 : null;
  }
  const [, y, mo, d, h, mi, s = '0', fraction = '', zone = 'Z'] = m;
  const wholeMs = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  if (!Number.isFinite(wholeMs)) return null;
  // In whole microseconds, then one division: the same double as `ms / 1000` for the same
  // instant, so a time read as text equals the time read as a Date.
  const micros = Number(`${fraction.slice(1, 7)}000000`.slice(0, 6));
  return (wholeMs * 1000 + micros - zoneSeconds(zone) * 1_000_000) / 1_000_000;
}

function zoneSeconds(zone: string): number {
  if (zone.toUpperCase() === 'Z') return 0;
  const sign = zone[0] === '-' ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * 3600 + Number(digits.slice(2) || '0') * 60);
}
