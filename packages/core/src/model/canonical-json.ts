import { EntityGitError, utf8Length } from '@entity-git/git';
import type { JsonValue } from './types.js';

/**
 * Canonical JSON: keys sorted by code point, 2-space indent, LF line ends, a final newline.
 * Anything JSON cannot represent exactly is rejected with `NON_JSON_VALUE` rather than silently
 * dropped or coerced (JSON.stringify turns NaN into null and drops undefined), so no two
 * different values serialize alike. `-0` is written as `0`, as JSON has a single zero.
 */
export function canonicalJson(value: unknown): string {
  const plain = sorted(value, 0, false);
  if (plain !== SLOW) return `${JSON.stringify(plain, null, 2)}\n`;
  let text = '';
  emit(value, '', new Set(), '$', (piece) => {
    text += typeof piece === 'string' ? piece : JSON.stringify(piece.big);
  });
  return `${text}\n`;
}

/** {@link sorted}'s answer for a value the engine's `JSON.stringify` must not write. */
const SLOW: unique symbol = Symbol('slow');
/** Deeper than this, {@link sorted} leaves the value (a cycle, perhaps) to the careful path. */
const DEPTH_MAX = 200;

/**
 * The fast path of canonical JSON: `value` itself, or a copy whose objects list their keys in
 * code point order, when `JSON.stringify(·, null, 2)` writes it exactly as {@link emit} would —
 * a JSON value through and through (finite numbers, no `toJSON`, plain objects without symbol
 * keys, arrays without holes), no deeper than {@link DEPTH_MAX}, and, with `bounded`, no string
 * of {@link BIG} or more units. Anything else is {@link SLOW}: the careful path writes it, or
 * names what JSON cannot hold. Only objects whose keys are out of order are copied.
 */
function sorted(value: unknown, depth: number, bounded: boolean): unknown {
  switch (typeof value) {
    case 'string':
      return bounded && value.length >= BIG ? SLOW : value;
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : SLOW;
    case 'object':
      break;
    default:
      return SLOW;
  }
  if (value === null) return null;
  if (depth >= DEPTH_MAX || (value as { toJSON?: unknown }).toJSON !== undefined) return SLOW;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) return SLOW;
      const item: unknown = value[i];
      const out = sorted(item, depth + 1, bounded);
      if (out === SLOW) return SLOW;
      if (out !== item && copy === null) copy = value.slice(0, i);
      copy?.push(out);
    }
    return copy ?? value;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return SLOW;
  if (Object.getOwnPropertySymbols(value).length > 0) return SLOW;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  const order = keyOrder(keys);
  if (order !== null) {
    // Keys out of order, none of them `__proto__` or integer-like: a plain object, keys added in
    // order, lists them so (and the same key list gives it the same shape every time).
    const copy: Record<string, unknown> = {};
    for (const i of order) {
      const key = keys[i]!;
      const out = sorted(obj[key], depth + 1, bounded);
      if (out === SLOW) return SLOW;
      copy[key] = out;
    }
    return copy;
  }
  let inOrder = true;
  // What each key holds in the copy, once a value had to be copied.
  let values: unknown[] | null = null;
  for (let i = 0; i < keys.length; i++) {
    if (i > 0 && inOrder && compareKeys(keys[i - 1]!, keys[i]!) > 0) inOrder = false;
    const item = obj[keys[i]!];
    const out = sorted(item, depth + 1, bounded);
    if (out === SLOW) return SLOW;
    if (out !== item && values === null) values = keys.slice(0, i).map((k) => obj[k]);
    values?.push(out);
  }
  if (inOrder && values === null) return value;
  values ??= keys.map((k) => obj[k]);
  const indexes = keys.map((_, i) => i);
  if (!inOrder) indexes.sort((a, b) => compareKeys(keys[a]!, keys[b]!));
  // No prototype: a `__proto__` key is an own key like any other.
  const copy: Record<string, unknown> = Object.create(null);
  for (const i of indexes) copy[keys[i]!] = values[i];
  if (!inOrder) {
    // The engine lists integer-like keys first, whatever their insertion order.
    const listed = Object.keys(copy);
    for (let i = 0; i < listed.length; i++) if (listed[i] !== keys[indexes[i]!]) return SLOW;
  }
  return copy;
}

/** Key lists seen before, by their keys in listed order: a trie of Maps, bounded. */
interface KeyTrie {
  next: Map<string, KeyTrie>;
  /** The order of the list ending here (see {@link keyOrder}); undefined until one does. */
  order?: Int32Array | null;
}
const keyTrie: KeyTrie = { next: new Map() };
let trieNodes = 0;
/** Trie nodes kept at most (a few key lists of every node, session and metadata shape). */
const TRIE_NODES_MAX = 4096;
const INTEGER_LIKE = /^(?:0|[1-9][0-9]*)$/;

/**
 * The permutation that writes an object's keys (as `Object.keys` lists them) in code point order,
 * when they are out of order and none is `__proto__` or integer-like; else null (the general
 * path). Objects of one shape — every node a sync reads — repeat one key list, so its order is
 * worked out once, not sorted for each object.
 */
function keyOrder(keys: readonly string[]): Int32Array | null {
  let at = keyTrie;
  for (const key of keys) {
    let next = at.next.get(key);
    if (next === undefined) {
      if (trieNodes++ >= TRIE_NODES_MAX) return null;
      at.next.set(key, (next = { next: new Map() }));
    }
    at = next;
  }
  if (at.order === undefined) {
    const order = Int32Array.from(keys, (_, i) => i).sort((a, b) => compareKeys(keys[a]!, keys[b]!));
    const plain = !keys.some((k) => k === '__proto__' || INTEGER_LIKE.test(k));
    at.order = plain && order.some((v, i) => v !== i) ? order : null;
  }
  return at.order;
}

/** {@link compareCodePoints}, quicker where the first differing units are no surrogates. */
function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Below the surrogates, units and code points order alike (the equal prefix before them
    // holds no pair split differently: a lead before a non-trail is a lone code point in both).
    if (x < 0xd800 && y < 0xd800) return x - y;
    return compareCodePoints(a, b);
  }
  return a.length - b.length;
}

/** Strings at least this long are escaped and encoded in slices, never as one escaped copy. */
const BIG = 1 << 16;

/**
 * The canonical JSON of `value` as UTF-8 bytes, behind `prefix(byteLength)` (a git object
 * header): exactly `prefix + utf8(canonicalJson(value))`, built without ever holding the whole
 * text as a string. A large string is escaped slice by slice (never splitting a surrogate
 * pair, so each slice escapes as it would in the whole) and encoded straight into the result:
 * a 100 MB tool output is held once as bytes, beside the node itself.
 */
export function canonicalJsonBytes(value: unknown, prefix: (byteLength: number) => string = () => ''): Uint8Array {
  const plain = sorted(value, 0, true);
  if (plain !== SLOW) return withPrefix(`${JSON.stringify(plain, null, 2)}\n`, prefix);
  const parts: (string | { big: string })[] = [];
  let small = '';
  const sink = (piece: string | { big: string }) => {
    if (typeof piece === 'string') small += piece;
    else {
      parts.push(small, piece);
      small = '';
    }
  };
  emit(value, '', new Set(), '$', sink);
  parts.push(`${small}\n`);
  let size = 0;
  for (const p of parts) size += typeof p === 'string' ? utf8Length(p) : bigLength(p.big);
  const head = encoder.encode(prefix(size));
  const out = new Uint8Array(head.length + size);
  out.set(head, 0);
  let at = head.length;
  for (const p of parts) {
    if (typeof p === 'string') at += encoder.encodeInto(p, out.subarray(at)).written;
    else {
      out[at++] = 0x22;
      for (const slice of slices(p.big))
        at += encoder.encodeInto(JSON.stringify(slice).slice(1, -1), out.subarray(at)).written;
      out[at++] = 0x22;
    }
  }
  if (at !== out.length)
    throw new EntityGitError('NON_JSON_VALUE', `canonical JSON came out ${at - head.length} bytes, not ${size}`);
  return out;
}

const encoder = new TextEncoder();
/** Where {@link withPrefix} encodes a text before it knows its byte length (kept up to 1 MB). */
let scratch = new Uint8Array(1 << 16);

/** `prefix(byteLength)` and `text` as UTF-8, in one array. */
function withPrefix(text: string, prefix: (byteLength: number) => string): Uint8Array {
  const room = text.length * 3;
  const into = room <= scratch.length ? scratch : new Uint8Array(room);
  if (into !== scratch && room <= 1 << 20) scratch = into;
  const size = encoder.encodeInto(text, into).written;
  const head = prefix(size);
  // An ASCII prefix (a git object header) is written by its char codes: no array of its own.
  if (!/^[\x00-\x7f]*$/.test(head)) {
    const bytes = encoder.encode(head);
    const out = new Uint8Array(bytes.length + size);
    out.set(bytes, 0);
    out.set(into.subarray(0, size), bytes.length);
    return out;
  }
  const out = new Uint8Array(head.length + size);
  for (let i = 0; i < head.length; i++) out[i] = head.charCodeAt(i);
  out.set(into.subarray(0, size), head.length);
  return out;
}

/** Slices of a long string, cut where no surrogate pair is split. */
function* slices(text: string): Generator<string> {
  for (let from = 0; from < text.length; ) {
    let to = Math.min(text.length, from + BIG);
    const last = text.charCodeAt(to - 1);
    if (to < text.length && last >= 0xd800 && last <= 0xdbff) to--;
    yield text.slice(from, to);
    from = to;
  }
}

function bigLength(text: string): number {
  let n = 2;
  for (const slice of slices(text)) n += utf8Length(JSON.stringify(slice)) - 2;
  return n;
}

/**
 * The careful path: canonical JSON of `value` in pieces (large strings go out unescaped, for the
 * caller to slice), naming the path of anything JSON cannot hold (`NON_JSON_VALUE`). The fast path
 * ({@link sorted}) hands over to it whatever `JSON.stringify` must not write itself.
 */
function emit(
  value: unknown,
  indent: string,
  seen: Set<object>,
  path: string,
  out: (piece: string | { big: string }) => void,
): void {
  if (typeof value === 'string' && value.length >= BIG) {
    out({ big: value });
    return;
  }
  if (scalar(value, path)) {
    out(JSON.stringify(value));
    return;
  }
  const obj = value as object;
  if (seen.has(obj)) fail(path, 'a cycle');
  const inner = `${indent}  `;
  seen.add(obj);
  try {
    if (Array.isArray(obj)) {
      if (obj.length === 0) {
        out('[]');
        return;
      }
      out('[\n');
      for (let i = 0; i < obj.length; i++) {
        if (!(i in obj)) fail(`${path}[${i}]`, 'a hole in a sparse array');
        out(i === 0 ? inner : `,\n${inner}`);
        emit(obj[i], inner, seen, `${path}[${i}]`, out);
      }
      out(`\n${indent}]`);
      return;
    }
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) {
      fail(path, `an instance of ${(obj as { constructor?: { name?: string } }).constructor?.name ?? 'a class'}`);
    }
    if (Object.getOwnPropertySymbols(obj).length > 0) fail(path, 'an object with symbol keys');
    const keys = Object.keys(obj).sort(compareCodePoints);
    if (keys.length === 0) {
      out('{}');
      return;
    }
    out('{\n');
    keys.forEach((k, i) => {
      out(`${i === 0 ? '' : ',\n'}${inner}${JSON.stringify(k)}: `);
      emit((obj as Record<string, unknown>)[k], inner, seen, `${path}.${k}`, out);
    });
    out(`\n${indent}}`);
    return;
  } finally {
    seen.delete(obj);
  }
}

/**
 * Throws `NON_JSON_VALUE` unless `value` is exactly representable as JSON. Walks the value
 * without serializing it, so checking a 100 MB tool output costs no 100 MB string.
 */
export function assertJson(value: unknown, where = '$'): asserts value is JsonValue {
  // The careful walk (which names the path of what fails) only when the quick one, canonical
  // JSON's own (what it takes is a JSON value), declines.
  if (sorted(value, 0, false) === SLOW) emit(value, '', new Set(), where, () => undefined);
}

/** Throws for a value no JSON text can hold exactly; true when `value` is a JSON scalar. */
function scalar(value: unknown, path: string): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      if (!Number.isFinite(value)) fail(path, String(value));
      return true;
    case 'bigint':
      return fail(path, 'a BigInt');
    case 'undefined':
      return fail(path, 'undefined');
    case 'function':
      return fail(path, 'a function');
    case 'symbol':
      return fail(path, 'a symbol');
  }
  return value === null;
}

function fail(path: string, what: string): never {
  throw new EntityGitError('NON_JSON_VALUE', `${path} is ${what}, which JSON cannot represent`, { path });
}

function compareCodePoints(a: string, b: string): number {
  // JS string comparison is by UTF-16 unit; code point order differs only when astral characters
  // meet U+E000..U+FFFF, and we want the order every other language's sort gives.
  if (a === b) return 0;
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0)!;
    const cy = y.value.codePointAt(0)!;
    if (cx !== cy) return cx - cy;
  }
}
