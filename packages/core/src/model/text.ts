import type { JsonValue } from './types.js';

/** The readable text of a message's content: a string, text parts of an array, or `.text`. */
export function textOf(content: JsonValue | undefined, depth = 0): string {
  if (typeof content === 'string') return content;
  if (depth > 8 || content === null || typeof content !== 'object') return '';
  if (Array.isArray(content)) {
    return content
      .map((part) => textOf(part, depth + 1))
      .filter((t) => t !== '')
      .join(' ');
  }
  if (typeof content.text === 'string') return content.text;
  if (content.content !== undefined) return textOf(content.content, depth + 1);
  return '';
}

/**
 * Text for one line of a commit message: control characters and whitespace runs folded to one
 * space, lone surrogates replaced by U+FFFD, trimmed, and cut at `max` code points (never
 * between the halves of a surrogate pair; no ellipsis).
 *
 * One pass over the text's head that stops once `max` code points are out: what
 * `text.replace(CONTROL, ' ').replace(LONE_SURROGATE, '\ufffd').replace(/\s+/gu, ' ').trim()`
 * then a cut at `max` code points gives, without folding the whole head first.
 */
export function foldLine(text: string, max: number): string {
  // Only the head of a long text can reach the line: fold a bounded prefix, not 100 MB.
  const n = Math.min(text.length, max * 8 + 1024);
  // The line so far is `out` and then `text.slice(from, i)`, `points` code points in all.
  let out = '';
  let from = 0;
  let points = 0;
  // Whitespace or control characters after some text: one space before the next character.
  let gap = false;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    // A lone space between two characters of the line stays where it is: no piece cut off.
    if (c === 0x20 && points > 0 && !gap && i + 1 < n && !folded(text.charCodeAt(i + 1))) {
      if (points === max) return out + text.slice(from, i);
      points++;
      continue;
    }
    if (folded(c)) {
      out += text.slice(from, i);
      from = i + 1;
      gap = points > 0;
      continue;
    }
    if (gap) {
      // Past `max` code points the line ends here, before the space.
      if (points === max) return out;
      out += ' ';
      points++;
      gap = false;
    }
    // A code point more than `max`: the line is the first `max`, trimmed.
    if (points === max) return (out + text.slice(from, i)).trimEnd();
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < n ? text.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++;
      else {
        out += `${text.slice(from, i)}\ufffd`;
        from = i + 1;
      }
    }
    points++;
  }
  return out + text.slice(from, n);
}

/** Whitespace or a control character: folded into the one space between two words. */
function folded(c: number): boolean {
  return c <= 0x20 || (c >= 0x7f && c <= 0xa0) || (c >= 0x1680 && isSpace(c));
}

/** Whitespace of `\s` from U+1680 up (those below are tested in {@link folded}). */
function isSpace(c: number): boolean {
  return (
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}
