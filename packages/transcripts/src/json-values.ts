import type { JsonValue } from '@entity-git/core';

/** Why the rest of a line could not be read. */
export type LineDamage = 'not-json' | 'cut-off';

/** The JSON values of one line, and where reading it stopped when it could not read it all. */
export interface LineValues {
  /** Each whole value, in order: the values before the damage are kept. */
  values: JsonValue[];
  /** Set when part of the line is no JSON value: its 0-based offset (UTF-16 units) and why. */
  damage: { at: number; kind: LineDamage; detail: string } | null;
}

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * The JSON values of a line written as one or more values back to back (`{…}{…}`, with or
 * without whitespace between: a writer that lost a newline). Each value is delimited by a scan
 * that follows strings, their escapes and the nesting of `{}`/`[]` — so a `}{` inside a string
 * is no boundary — and then parsed by `JSON.parse`, which decides what is valid. Reading stops at
 * the first byte that begins no value (`not-json`) or at a value the line ends inside
 * (`cut-off`); what follows is not guessed at, since text after a damaged value cannot be told
 * apart from the damaged value's own text.
 */
export function lineValues(line: string): LineValues {
  // One value per line is what every writer means to write.
  try {
    return { values: [JSON.parse(line) as JsonValue], damage: null };
  } catch {
    // more than one value, or damage: scanned below
  }
  const values: JsonValue[] = [];
  let i = 0;
  for (;;) {
    while (i < line.length && isSpace(line.charCodeAt(i))) i++;
    if (i >= line.length) return { values, damage: null };
    const end = valueEnd(line, i);
    if (end < 0) return { values, damage: { at: i, kind: 'cut-off', detail: 'the line ends inside a value' } };
    try {
      values.push(JSON.parse(line.slice(i, end)) as JsonValue);
    } catch (err) {
      return { values, damage: { at: i, kind: 'not-json', detail: (err as Error).message } };
    }
    i = end;
  }
}

/**
 * The end (exclusive) of the value starting at `start`, found without parsing it: a container
 * ends where its nesting returns to zero outside strings, a string at its closing quote, any
 * other token at the next space, quote or bracket. -1 when the line ends first (a container or
 * string still open).
 */
function valueEnd(line: string, start: number): number {
  const first = line.charCodeAt(start);
  if (first === 0x22) {
    const close = stringEnd(line, start + 1);
    return close < 0 ? -1 : close + 1;
  }
  if (first !== 0x7b && first !== 0x5b) {
    let j = start + 1;
    while (j < line.length) {
      const c = line.charCodeAt(j);
      if (isSpace(c) || c === 0x22 || c === 0x7b || c === 0x5b || c === 0x7d || c === 0x5d || c === 0x2c) break;
      j++;
    }
    return j;
  }
  let depth = 0;
  for (let j = start; j < line.length; j++) {
    const c = line.charCodeAt(j);
    if (c === 0x22) {
      j = stringEnd(line, j + 1);
      if (j < 0) return -1;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  return -1;
}

/** The index of the quote closing a string whose text starts at `from`; -1 when the line ends first. */
function stringEnd(line: string, from: number): number {
  for (let j = from; j < line.length; j++) {
    const c = line.charCodeAt(j);
    if (c === 0x5c) j++;
    else if (c === 0x22) return j;
  }
  return -1;
}
