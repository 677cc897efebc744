import type { JsonValue } from '../model/types.js';

const MARKER = /\[REDACTED:([a-z0-9_-]{1,40})\]/g;

/** The marker that replaces a secret found by `rule`. */
export const redactionMarker = (rule: string): string => `[REDACTED:${rule}]`;

/** How many markers of each rule a JSON value holds (the commit message's `redacted:` line). */
export function countMarkers(value: JsonValue, counts: Map<string, number>): void {
  if (typeof value === 'string') {
    if (!value.includes('[REDACTED:')) return;
    for (const m of value.matchAll(MARKER)) counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + 1);
  } else if (value !== null && typeof value === 'object') {
    for (const v of Array.isArray(value) ? value : Object.values(value)) countMarkers(v, counts);
  }
}
