/**
 * Text as the CLI prints it for people: control characters (C0, DEL, C1 — NUL, ESC and the rest)
 * never reach the terminal raw, where they would cut a line, move the cursor or recolour it; each
 * becomes `\xNN` (`\u{NNNN}` above 0xff is not needed: the C1 block ends at 0x9f). An id holding
 * such characters (a session id with NUL, stored by another program) prints visibly, and the JSON
 * output (`--json`) escapes them as JSON does.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

const escapeControl = (c: string): string => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;

/** One field on one line (an id, a branch name): every control character escaped, newlines and tabs too. */
export function printable(text: string): string {
  return text.replace(CONTROL, escapeControl);
}

/** Whole lines of output: control characters escaped, except the newlines and tabs that lay it out. */
export function printableLines(text: string): string {
  return text.replace(CONTROL_BUT_LINES, escapeControl);
}
