import { CliError } from './cli-error.js';
import { EXIT_USAGE } from './exit-codes.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A duration as a user writes it on the command line, in ms: a number and a unit (`500ms`,
 * `30s`, `5m`, `1h`), or a bare number of seconds (`0`, `90`). Anything else is a usage error
 * naming the option.
 */
export function parseDuration(text: string, option: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  const ms = m ? Number(m[1]) * UNITS[m[2] ?? 's']! : Number.NaN;
  if (!Number.isFinite(ms))
    throw new CliError(
      `${option} takes a duration such as 30s, 5m or 0 (a bare number is seconds), got ${JSON.stringify(text)}`,
      EXIT_USAGE,
    );
  return Math.round(ms);
}
