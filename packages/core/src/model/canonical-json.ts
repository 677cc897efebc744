import { EntityGitError, utf8Length } from '@entity-git/git';
import type { JsonValue } from './types.js';

/**
 * Canonical JSON: keys sorted by code point, 2-space indent, LF line ends, a final newline.
 * Anything JSON cannot represent exactly is rejected with `NON_JSON_VALUE` rather than silently
 * dropped or coerced (JSON.stringify turns NaN into null and drops undefined), so no two
 * different values serialize alike. `-0` is written as `0`, as JSON has a single zero.
 */
export function canonicalJson(value: unknown): string {
  return `${JSON.stringify(walk(value, 0, null), null, 2)}\n`;
}

/**
 * The one walk of a value: checks it is JSON through and through (finite numbers, plain objects
 * without symbol keys, arrays without holes, no cycle), naming the path of what is not
 * (`NON_JSON_VALUE`), and returns what `JSON.stringify(·, null, 2)` writes as canonical JSON:
 * `value` itself, or a copy whose objects list their keys in code point order (only objects whose
 * keys are out of order are copied; a Proxy lists integer-like keys in that order, where the
 * engine would put them first). With `bigs` (the bytes' walk), a string of {@link BIG} or more
 * units, or one that starts with NUL, goes to `bigs` and is replaced by its {@link marker}.
 */
function walk(value: unknown, depth: number, bigs: string[] | null): unknown {
  switch (typeof value) {
    case 'string':
      if (bigs === null || (value.length < BIG && value.charCodeAt(0) !== 0)) return value;
      bigs.push(value);
      return marker(bigs.length - 1);
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : fail(depth, String(value));
    case 'object':
      if (value === null) return null;
      break;
    case 'bigint':
      return fail(depth, 'a BigInt');
    case 'function':
      return fail(depth, 'a function');
    case 'symbol':
      return fail(depth, 'a symbol');
    default:
      return fail(depth, 'undefined');
  }
  ancestors[depth] = value;
  if (depth >= DEEP) enterDeep(value);
  const out = Array.isArray(value) ? walkArray(value, depth, bigs) : walkObject(value, depth, bigs);
  if (depth >= DEEP) deep.delete(value);
  return out;
}

function walkArray(value: unknown[], depth: number, bigs: string[] | null): unknown[] {
  // An array's own `toJSON` would be called by JSON.stringify: a copy has none.
  let copy: unknown[] | null = (value as { toJSON?: unknown }).toJSON === undefined ? null : [];
  for (let i = 0; i < value.length; i++) {
    trail[depth] = i;
    if (!(i in value)) fail(depth + 1, 'a hole in a sparse array');
    const item: unknown = value[i];
    const out = walk(item, depth + 1, bigs);
    if (out !== item && copy === null) copy = value.slice(0, i);
    copy?.push(out);
  }
  return copy ?? value;
}

function walkObject(value: object, depth: number, bigs: string[] | null): unknown {
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null)
    fail(depth, `an instance of ${(value as { constructor?: { name?: string } }).constructor?.name ?? 'a class'}`);
  if (Object.getOwnPropertySymbols(value).length > 0) fail(depth, 'an object with symbol keys');
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  const order = keyOrder(keys);
  if (order !== null) {
    // Keys out of order, none of them `__proto__` or integer-like: a plain object, keys added in
    // order, lists them so (and the same key list gives it the same shape every time).
    const copy: Record<string, unknown> = {};
    for (const i of order) {
      const key = keys[i]!;
      trail[depth] = key;
      copy[key] = walk(obj[key], depth + 1, bigs);
    }
    return copy;
  }
  let inOrder = true;
  // What each key holds in the copy, once a value had to be copied.
  let values: unknown[] | null = null;
  for (let i = 0; i < keys.length; i++) {
    if (i > 0 && inOrder && compareKeys(keys[i - 1]!, keys[i]!) > 0) inOrder = false;
    const item = obj[keys[i]!];
    trail[depth] = keys[i]!;
    const out = walk(item, depth + 1, bigs);
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
  if (inOrder) return copy;
  // The engine lists integer-like keys first, whatever their insertion order; JSON.stringify
  // lists a Proxy's keys as its `ownKeys` gives them (EnumerableOwnProperties).
  const sortedKeys = indexes.map((i) => keys[i]!);
  const listed = Object.keys(copy);
  return listed.every((k, i) => k === sortedKeys[i]) ? copy : new Proxy(copy, { ownKeys: () => sortedKeys });
}

/** The containers the walk is in, by depth, and the key or index it took at each. */
const ancestors: object[] = [];
const trail: (string | number)[] = [];
/** From this depth on, the walk keeps its ancestors in {@link deep} to find a cycle. */
const DEEP = 200;
const deep = new Set<object>();

/** Past {@link DEEP}: a container met again inside itself is a cycle. */
function enterDeep(value: object): void {
  if (!deep.has(value)) {
    deep.add(value);
    return;
  }
  // Named where the path first meets a container it is already in (`$.self`).
  const seen = new Set<object>();
  let at = 0;
  while (!seen.has(ancestors[at]!)) seen.add(ancestors[at++]!);
  fail(at, 'a cycle');
}

/** The path of the value at `depth` of the current walk (`$.a[1].b`). */
function pathTo(depth: number): string {
  let path = where;
  for (let i = 0; i < depth; i++) {
    const step = trail[i]!;
    path += typeof step === 'number' ? `[${step}]` : `.${step}`;
  }
  return path;
}
/** Where the current walk's value sits ({@link assertJson}'s `where`). */
let where = '$';

function fail(depth: number, what: string): never {
  deep.clear();
  const path = pathTo(depth);
  throw new EntityGitError('NON_JSON_VALUE', `${path} is ${what}, which JSON cannot represent`, { path });
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
  const bigs: string[] = [];
  const text = `${JSON.stringify(walk(value, 0, bigs), null, 2)}\n`;
  if (bigs.length === 0) return withPrefix(text, prefix);
  const parts = spliced(text, bigs);
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

/**
 * A big string's stand-in: NUL and its index in `bigs`. The walk sends every string value that
 * starts with NUL to `bigs` too, so a value written `"\u0000<digits>"` is a stand-in and nothing
 * else.
 */
const marker = (index: number) => `\u0000${index}`;
const MARKER_TEXT = '"\\u0000';

/**
 * `text` cut at its stand-ins, each replaced by its string: the text around them, and the big
 * strings (written quoted, slice by slice). A stand-in's opening quote follows no backslash
 * (inside a string a quote is escaped; a closing quote is never followed by a backslash), and
 * its closing quote is followed by no `:` (a key is; keys are not stand-ins).
 */
function spliced(text: string, bigs: readonly string[]): (string | { big: string })[] {
  const parts: (string | { big: string })[] = [];
  let from = 0;
  for (let at = text.indexOf(MARKER_TEXT); at !== -1; at = text.indexOf(MARKER_TEXT, at + 1)) {
    const digits = /^[0-9]+"/.exec(text.slice(at + MARKER_TEXT.length, at + MARKER_TEXT.length + 12));
    const end = at + MARKER_TEXT.length + (digits?.[0].length ?? 0);
    if (digits === null || text.charCodeAt(at - 1) === 0x5c || text.charCodeAt(end) === 0x3a) continue;
    parts.push(text.slice(from, at), { big: bigs[Number(digits[0].slice(0, -1))]! });
    from = end;
  }
  parts.push(text.slice(from));
  return parts;
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
 * Throws `NON_JSON_VALUE` unless `value` is exactly representable as JSON. Walks the value
 * without serializing it, so checking a 100 MB tool output costs no 100 MB string.
 */
export function assertJson(value: unknown, at = '$'): asserts value is JsonValue {
  where = at;
  try {
    walk(value, 0, null);
  } finally {
    where = '$';
  }
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
