/*
 * Why this package has two git index codecs: this one (the project auto-commit's, for a user's
 * index) and `index-file.ts` (the session mirror's).
 *
 * They read and write different indexes, under different rules, and neither can serve the other
 * without a change of behaviour:
 * - The mirror's (`parseIndex`/`readIndex`, `buildIndex`/`buildSplitIndex`) reads only indexes the
 *   mirror wrote itself, and is strict on purpose: versions 2–3 only, a real checksum, no conflict
 *   stages; anything else is `REPO_CORRUPT`, which makes the mirror rebuild its working tree. It
 *   keeps path, blob and stat data only (no flags, no extensions) and merges a split index with its
 *   `sharedindex.<oid>` (the EWAH bitmaps of the `link` extension are parsed there, privately).
 * - This one reads whatever a user's git wrote and writes it back without losing what matters:
 *   version 4 path compression, conflict stages, assume-valid / skip-worktree / intent-to-add, the
 *   zero checksum of `index.skipHash`, and the extensions it does not understand (REUC…) kept;
 *   a split or sparse index is reported as unsupported (`unsupportedIndex`), never merged or
 *   rewritten.
 * One reader for both would either make the mirror accept indexes it now rejects (v4, stages, a zero
 * checksum), or make this one drop what it must write back. Building the mirror's strict reader on
 * `readWorkIndex` (its checks on top, the entries mapped down) is possible, but it would trade a
 * small, strict reader for a lenient one plus checks, for no reader fewer in the code that matters
 * (the split-index `link` parsing stays in `index-file.ts` either way). The writers differ the same
 * way: the mirror's writes its own fresh entries (optionally split), this one rewrites a user's index
 * with exactly some entries changed and the cache extensions dropped.
 */

import type { Codec } from '../codec/codec.js';
import { EntityGitError } from '../errors.js';
import { fromHex, toHex } from '../bytes/hex.js';
import { fromUtf8, utf8 } from '../bytes/utf8.js';

/**
 * A user's git index, read whole and written back without loss of what matters: versions 2, 3
 * and 4 (path prefix compression), conflict stages, assume-valid, skip-worktree and intent-to-add
 * bits, and a zero checksum (`index.skipHash`). Unlike the session mirror's `parseIndex`, which
 * only reads indexes it wrote itself.
 */
export interface WorkIndexEntry {
  ctimeSec: number;
  ctimeNsec: number;
  mtimeSec: number;
  mtimeNsec: number;
  dev: number;
  ino: number;
  mode: number;
  uid: number;
  gid: number;
  size: number;
  oid: string;
  stage: number;
  assumeValid: boolean;
  skipWorktree: boolean;
  intentToAdd: boolean;
  path: string;
}

export interface WorkIndex {
  version: number;
  entries: WorkIndexEntry[];
  extensions: Array<{ signature: string; data: Uint8Array }>;
}

/**
 * Extensions that are caches of the entries and go stale when an entry changes; git rebuilds
 * each one it misses (TREE: cache-tree, UNTR: untracked cache, FSMN: fsmonitor, EOIE/IEOT: offsets).
 */
const DROPPED_ON_WRITE = new Set(['TREE', 'UNTR', 'FSMN', 'EOIE', 'IEOT']);

/**
 * Why an index cannot be rewritten safely by us, or null: a split index (`link`) keeps entries in
 * another file; a sparse index (`sdir`) holds directories as entries; any other extension whose
 * signature starts with a lower-case letter is one git says a reader must understand.
 */
export function unsupportedIndex(index: WorkIndex): string | null {
  for (const { signature } of index.extensions) {
    if (signature === 'link') return 'a split index (core.splitIndex)';
    if (signature === 'sdir') return 'a sparse index (index.sparse)';
    if (/^[a-z]/.test(signature)) return `the index extension ${signature}`;
  }
  return null;
}

const bad = (why: string): never => {
  throw new EntityGitError('REPO_CORRUPT', `the index cannot be read: ${why}`);
};

export function readWorkIndex(data: Uint8Array, codec: Codec): WorkIndex {
  if (data.length < 32 || fromUtf8(data.subarray(0, 4)) !== 'DIRC') bad('no DIRC header');
  const trailer = data.subarray(data.length - 20);
  if (trailer.some((b) => b !== 0) && codec.sha1(data.subarray(0, data.length - 20)) !== toHex(trailer))
    bad('checksum mismatch');
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const version = view.getUint32(4);
  if (version < 2 || version > 4) bad(`version ${version}`);
  const count = view.getUint32(8);
  const end = data.length - 20;
  const entries: WorkIndexEntry[] = [];
  let at = 12;
  let previous: Uint8Array = new Uint8Array(0);
  for (let i = 0; i < count; i++) {
    if (at + 62 > end) bad('truncated');
    const f = (k: number) => view.getUint32(at + k * 4);
    const flags = view.getUint16(at + 60);
    const extended = (flags & 0x4000) !== 0;
    if (extended && version < 3) bad('extended flags in a version 2 index');
    const ext = extended ? view.getUint16(at + 62) : 0;
    let p = at + 62 + (extended ? 2 : 0);
    let name: Uint8Array;
    if (version === 4) {
      // The path is the previous one less `strip` bytes, then a NUL-terminated suffix; no padding.
      let byte = data[p++]!;
      let strip = byte & 0x7f;
      while (byte & 0x80) {
        byte = data[p++]!;
        strip = ((strip + 1) << 7) | (byte & 0x7f);
      }
      if (strip > previous.length) bad('a path strips more than its predecessor has');
      const nul = data.indexOf(0, p);
      if (nul < 0 || nul >= end) bad('unterminated path');
      const suffix = data.subarray(p, nul);
      name = new Uint8Array(previous.length - strip + suffix.length);
      name.set(previous.subarray(0, previous.length - strip), 0);
      name.set(suffix, previous.length - strip);
      p = nul + 1;
    } else {
      const nul = data.indexOf(0, p);
      if (nul < 0 || nul >= end) bad('unterminated path');
      name = data.subarray(p, nul);
      p = at + Math.ceil((nul + 1 - at) / 8) * 8;
    }
    previous = name;
    entries.push({
      ctimeSec: f(0),
      ctimeNsec: f(1),
      mtimeSec: f(2),
      mtimeNsec: f(3),
      dev: f(4),
      ino: f(5),
      mode: f(6),
      uid: f(7),
      gid: f(8),
      size: f(9),
      oid: toHex(data.subarray(at + 40, at + 60)),
      stage: (flags >> 12) & 3,
      assumeValid: (flags & 0x8000) !== 0,
      skipWorktree: (ext & 0x4000) !== 0,
      intentToAdd: (ext & 0x2000) !== 0,
      path: fromUtf8(name),
    });
    at = p;
  }
  const extensions: WorkIndex['extensions'] = [];
  while (at + 8 <= end) {
    const signature = fromUtf8(data.subarray(at, at + 4));
    const size = view.getUint32(at + 4);
    if (at + 8 + size > end) bad(`extension ${signature} is truncated`);
    extensions.push({ signature, data: data.slice(at + 8, at + 8 + size) });
    at += 8 + size;
  }
  return { version, entries, extensions };
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/**
 * Index bytes for `index`: version 3 when an entry needs extended flags, else 2 (git reads any
 * version whatever `index.version` says, and writes its own next time); entries sorted by path
 * then stage; the cache extensions dropped, the others (e.g. REUC, resolve-undo) kept.
 */
export function writeWorkIndex(index: WorkIndex, codec: Codec): Uint8Array {
  const named = index.entries
    .map((e) => ({ e, name: utf8(e.path) }))
    .sort((a, b) => compareBytes(a.name, b.name) || a.e.stage - b.e.stage);
  const v3 = named.some(({ e }) => e.skipWorktree || e.intentToAdd);
  const kept = index.extensions.filter((x) => !DROPPED_ON_WRITE.has(x.signature));
  let size = 12;
  for (const { e, name } of named)
    size += Math.ceil((62 + (e.skipWorktree || e.intentToAdd ? 2 : 0) + name.length + 1) / 8) * 8;
  for (const x of kept) size += 8 + x.data.length;
  const out = new Uint8Array(size + 20);
  const view = new DataView(out.buffer);
  out.set(utf8('DIRC'), 0);
  view.setUint32(4, v3 ? 3 : 2);
  view.setUint32(8, named.length);
  let at = 12;
  for (const { e, name } of named) {
    const extended = e.skipWorktree || e.intentToAdd;
    [e.ctimeSec, e.ctimeNsec, e.mtimeSec, e.mtimeNsec, e.dev, e.ino, e.mode, e.uid, e.gid, e.size].forEach((v, i) =>
      view.setUint32(at + i * 4, v >>> 0),
    );
    out.set(fromHex(e.oid), at + 40);
    view.setUint16(
      at + 60,
      (e.assumeValid ? 0x8000 : 0) | (extended ? 0x4000 : 0) | ((e.stage & 3) << 12) | Math.min(name.length, 0xfff),
    );
    if (extended) view.setUint16(at + 62, (e.skipWorktree ? 0x4000 : 0) | (e.intentToAdd ? 0x2000 : 0));
    out.set(name, at + 62 + (extended ? 2 : 0));
    at += Math.ceil((62 + (extended ? 2 : 0) + name.length + 1) / 8) * 8;
  }
  for (const x of kept) {
    out.set(utf8(x.signature), at);
    view.setUint32(at + 4, x.data.length);
    out.set(x.data, at + 8);
    at += 8 + x.data.length;
  }
  out.set(fromHex(codec.sha1(out.subarray(0, size))), size);
  return out;
}
