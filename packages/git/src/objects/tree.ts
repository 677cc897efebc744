import { EntityGitError } from '../errors.js';
import { compareBytes } from '../bytes/compare.js';
import { hexInto, toHex } from '../bytes/hex.js';
import { fromUtf8, utf8 } from '../bytes/utf8.js';

export interface TreeEntry {
  /** `100644` (file), `100755` (executable), `40000` (tree), `120000` (link), `160000` (gitlink). */
  mode: string;
  name: string;
  oid: string;
}

// Entry bytes by `mode name oid`: a session's trees repeat the same entries turn after turn.
const entryCache = new Map<string, Uint8Array>();
const ENTRY_CACHE_MAX = 200_000;
const ASCII = /^[\x00-\x7f]*$/;

// And by entry object, for the entries a mirror keeps from one turn to the next (no key to build).
const entryObjects = new WeakMap<TreeEntry, Uint8Array>();

export function entryBytes(e: TreeEntry): Uint8Array {
  const kept = entryObjects.get(e);
  if (kept !== undefined) return kept;
  const key = `${e.mode} ${e.name}\0${e.oid}`;
  let bytes = entryCache.get(key);
  if (bytes === undefined) {
    const head = utf8(`${e.mode} ${e.name}\0`);
    bytes = new Uint8Array(head.length + 20);
    bytes.set(head, 0);
    hexInto(e.oid, bytes, head.length);
    if (entryCache.size >= ENTRY_CACHE_MAX) entryCache.clear();
    entryCache.set(key, bytes);
  }
  entryObjects.set(e, bytes);
  return bytes;
}

/**
 * Tree bytes built by hand (measured: far cheaper than isomorphic-git's writeTree on a large tree):
 * entries sorted as git sorts them — bytewise, a tree's name compared as if it ended in `/`.
 */
export function buildTree(entries: readonly TreeEntry[]): Uint8Array {
  const sortKey = (e: TreeEntry) => (e.mode === '40000' ? `${e.name}/` : e.name);
  let ascii = true;
  let inOrder = true;
  for (let i = 0; i < entries.length && ascii; i++) {
    if (!ASCII.test(entries[i]!.name)) ascii = false;
    else if (i > 0 && inOrder && !(sortKey(entries[i - 1]!) < sortKey(entries[i]!))) inOrder = false;
  }
  let sorted: readonly TreeEntry[];
  if (ascii && inOrder) {
    // What a mirror passes: its entries kept in order, so there is nothing to sort.
    sorted = entries;
  } else if (ascii) {
    // For ASCII, UTF-16 order is byte order; message file names are always ASCII.
    sorted = [...entries].sort((a, b) => {
      const x = sortKey(a);
      const y = sortKey(b);
      return x < y ? -1 : x > y ? 1 : 0;
    });
  } else {
    sorted = entries
      .map((e) => ({ e, key: utf8(sortKey(e)) }))
      .sort((a, b) => compareBytes(a.key, b.key))
      .map((k) => k.e);
  }
  let size = 0;
  for (const e of sorted) size += entrySize(e);
  const out = new Uint8Array(size);
  let at = 0;
  for (const e of sorted) at = writeEntry(out, at, e);
  return out;
}

const nibble = (c: number): number => (c <= 57 ? c - 48 : (c | 32) - 87);

/** Whether {@link writeEntry} writes `e` itself: an ASCII mode and name, a 40-digit oid. */
const direct = (e: TreeEntry): boolean => e.oid.length === 40 && ASCII.test(e.name) && ASCII.test(e.mode);

/** The length of {@link entryBytes}`(e)`. */
function entrySize(e: TreeEntry): number {
  return direct(e) ? e.mode.length + e.name.length + 22 : entryBytes(e).length;
}

/**
 * {@link entryBytes}`(e)` written into `out` at `at`; returns where it ends. An ASCII entry is
 * written character by character, with no bytes of its own to make and keep (in a CPU profile of an
 * import, entryBytes' caches and collecting them were a visible share).
 */
function writeEntry(out: Uint8Array, at: number, e: TreeEntry): number {
  if (!direct(e)) {
    const b = entryBytes(e);
    out.set(b, at);
    return at + b.length;
  }
  const { mode, name, oid } = e;
  for (let i = 0; i < mode.length; i++) out[at++] = mode.charCodeAt(i);
  out[at++] = 0x20;
  for (let i = 0; i < name.length; i++) out[at++] = name.charCodeAt(i);
  out[at++] = 0;
  for (let i = 0; i < 40; i += 2) out[at++] = (nibble(oid.charCodeAt(i)) << 4) | nibble(oid.charCodeAt(i + 1));
  return at;
}

/**
 * `tree` (the bytes of `entries.slice(0, count)`, as {@link buildTree} made them) followed by
 * `entries.slice(count)` — the tree {@link buildTree} would make of all of `entries` when the
 * added entries sort after the kept ones; null when they do not.
 */
export function extendTree(tree: Uint8Array, entries: readonly TreeEntry[], count: number): Uint8Array | null {
  const sortKey = (e: TreeEntry) => (e.mode === '40000' ? `${e.name}/` : e.name);
  for (let i = Math.max(1, count); i < entries.length; i++) {
    if (!ASCII.test(entries[i]!.name) || !(sortKey(entries[i - 1]!) < sortKey(entries[i]!))) return null;
  }
  if (count > 0 && count < entries.length && !ASCII.test(entries[count - 1]!.name)) return null;
  let size = tree.length;
  for (let i = count; i < entries.length; i++) size += entrySize(entries[i]!);
  // A session's flat tree grows by a few entries a turn: it is written after the previous tree
  // in the same buffer when that tree's bytes are the last written there (so bytes already handed
  // out are never written over), not copied whole each turn.
  const end = tree.byteOffset + tree.length;
  let out: Uint8Array;
  if (tree.length > 0 && grown.get(tree.buffer) === end && tree.byteOffset + size <= tree.buffer.byteLength) {
    out = new Uint8Array(tree.buffer, tree.byteOffset, size);
  } else {
    out = new Uint8Array(new ArrayBuffer(size < 4096 ? size : size * 2), 0, size);
    out.set(tree, 0);
  }
  let at = tree.length;
  for (let i = count; i < entries.length; i++) at = writeEntry(out, at, entries[i]!);
  grown.set(out.buffer, out.byteOffset + out.length);
  return out;
}

/** Bytes written so far into each buffer {@link extendTree} grows a tree in. */
const grown = new WeakMap<ArrayBufferLike, number>();

export function parseTree(content: Uint8Array): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let i = 0;
  while (i < content.length) {
    const space = content.indexOf(0x20, i);
    const nul = content.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > content.length)
      throw new EntityGitError('OBJECT_CORRUPT', 'a tree object is truncated');
    entries.push({
      mode: fromUtf8(content.subarray(i, space)),
      name: fromUtf8(content.subarray(space + 1, nul)),
      oid: toHex(content.subarray(nul + 1, nul + 21)),
    });
    i = nul + 21;
  }
  return entries;
}
