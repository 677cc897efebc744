import type { JsonValue } from '../../src/model/types.js';

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

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
 */
export function foldLine(text: string, max: number): string {
  // Only the head of a long text can reach the line: fold a bounded prefix, not 100 MB.
  if (text.length > max * 8 + 1024) text = text.slice(0, max * 8 + 1024);
  const folded = text.replace(CONTROL, ' ').replace(LONE_SURROGATE, '\ufffd').replace(/\s+/gu, ' ').trim();
  // No longer than max UTF-16 units: no more code points either. Else cut after the max-th one.
  if (folded.length <= max) return folded;
  let end = 0;
  let points = 0;
  for (const point of folded) {
    if (points === max) return folded.slice(0, end).trimEnd();
    end += point.length;
    points++;
  }
  return folded;
}
