/**
 * How long a source must be quiet before a turn it still calls open is committed, by default:
 * 5 minutes, for every source that infers openness from what it reads (an application's tables,
 * a transcript). See docs/design.md, 'Turns, commits and branches' (Completeness).
 */
export const DEFAULT_QUIET_MS = 5 * 60_000;
