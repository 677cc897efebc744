import { EntityGitError } from './errors.js';
import { fromHex, hexInto, toHex } from './bytes/hex.js';
import { fromUtf8, utf8 } from './bytes/utf8.js';
import type { Codec } from './codec/codec.js';
import { joinPath } from './storage/paths.js';
import type { StorageStat } from './storage/storage.js';
import type { Store } from './storage/store.js';
import { runAll } from './work-steps.js';

/** One entry of git's index: a path, its blob, and the stat data git compares to skip re-hashing. */
export interface IndexEntry {
  path: string;
  oid: string;
  mode: number;
  ctimeSec: number;
  ctimeNsec: number;
  mtimeSec: number;
  mtimeNsec: number;
  dev: number;
  ino: number;
  uid: number;
  gid: number;
  size: number;
}

const u32 = (n: number) => n >>> 0;
const ASCII = /^[\x00-\x7f]*$/;

export function entryFromStat(path: string, oid: string, st: StorageStat): IndexEntry {
  const split = (ms: number | undefined, ns: bigint | undefined): [number, number] => {
    if (ns !== undefined) return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
    const m = ms ?? 0;
    const sec = Math.floor(m / 1000);
    return [sec, Math.floor((m - sec * 1000) * 1e6)];
  };
  const [ctimeSec, ctimeNsec] = split(st.ctimeMs ?? st.mtimeMs, st.ctimeNs);
  const [mtimeSec, mtimeNsec] = split(st.mtimeMs, st.mtimeNs);
  return {
    path,
    oid,
    mode: 0o100644,
    ctimeSec,
    ctimeNsec,
    mtimeSec,
    mtimeNsec,
    dev: st.dev ?? 0,
    ino: st.ino ?? 0,
    uid: st.uid ?? 0,
    gid: st.gid ?? 0,
    size: st.size,
  };
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/**
 * An entry's bytes, kept for as long as the entry object lives: a mirror rewrites its index with
 * mostly the same entries every turn, so each is encoded once.
 */
const encoded = new WeakMap<IndexEntry, Encoded>();

interface Encoded {
  name: Uint8Array;
  bytes: Uint8Array;
  ascii: boolean;
}

function encodeEntry(e: IndexEntry): Encoded {
  let done = encoded.get(e);
  if (done === undefined) {
    const name = utf8(e.path);
    const bytes = new Uint8Array(Math.ceil((62 + name.length + 1) / 8) * 8);
    const view = new DataView(bytes.buffer);
    view.setUint32(0, u32(e.ctimeSec));
    view.setUint32(4, u32(e.ctimeNsec));
    view.setUint32(8, u32(e.mtimeSec));
    view.setUint32(12, u32(e.mtimeNsec));
    view.setUint32(16, u32(e.dev));
    view.setUint32(20, u32(e.ino));
    view.setUint32(24, u32(e.mode));
    view.setUint32(28, u32(e.uid));
    view.setUint32(32, u32(e.gid));
    view.setUint32(36, u32(e.size));
    hexInto(e.oid, bytes, 40);
    view.setUint16(60, Math.min(name.length, 0xfff));
    bytes.set(name, 62);
    done = { name, bytes, ascii: ASCII.test(e.path) };
    encoded.set(e, done);
  }
  return done;
}

/** Index file (version 2) bytes for `entries`, sorted by path as git requires, with the checksum. */
export function buildIndex(entries: readonly IndexEntry[], codec: Codec): Uint8Array {
  return runAll(build(entries, codec, null));
}

/**
 * {@link buildIndex} in steps: a generator that pauses (`yield`) every {@link STEP} entries, so a
 * caller can give its host's event loop a turn while the index of a large checkout is made.
 * Returns the same bytes.
 */
export function buildIndexSteps(entries: readonly IndexEntry[], codec: Codec): Generator<void, Uint8Array, void> {
  return build(entries, codec, null);
}

/**
 * A split index (git's `link` extension): `entries` are the ones the shared index
 * `sharedindex.<shared>` lacks; none of its entries is deleted or replaced. Git reads the two as
 * one index, and a git command that changes an entry writes it back whole.
 */
export function buildSplitIndex(entries: readonly IndexEntry[], shared: string, codec: Codec): Uint8Array {
  return runAll(build(entries, codec, linkExtension(shared)));
}

function linkExtension(shared: string): Uint8Array {
  const link = new Uint8Array(8 + 20 + 2 * EMPTY_EWAH.length);
  link.set(utf8('link'), 0);
  new DataView(link.buffer).setUint32(4, link.length - 8);
  link.set(fromHex(shared), 8);
  link.set(EMPTY_EWAH, 28);
  link.set(EMPTY_EWAH, 28 + EMPTY_EWAH.length);
  return link;
}

/** An EWAH bitmap with no bit set, as git serializes one: no bits, one empty marker word, its position. */
const EMPTY_EWAH = new Uint8Array([0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);

/** Entries encoded or copied between two pauses of {@link buildIndexSteps}. */
const STEP = 256;

function* build(
  entries: readonly IndexEntry[],
  codec: Codec,
  extension: Uint8Array | null,
): Generator<void, Uint8Array, void> {
  const enc: Encoded[] = [];
  let ascii = true;
  let sorted = true;
  for (let i = 0; i < entries.length; i++) {
    if (i % STEP === STEP - 1) yield;
    const e = encodeEntry(entries[i]!);
    enc.push(e);
    if (!e.ascii) ascii = false;
    if (i > 0 && !(entries[i - 1]!.path < entries[i]!.path)) sorted = false;
  }
  let order: Encoded[] = enc;
  // ASCII paths (every path the mirror writes) sort the same as strings as they do as bytes;
  // the mirror keeps its entries in order, so mostly there is nothing to sort.
  if (!(sorted && ascii)) {
    yield;
    const idx = enc.map((_, i) => i);
    if (ascii)
      idx.sort((a, b) => (entries[a]!.path < entries[b]!.path ? -1 : entries[a]!.path > entries[b]!.path ? 1 : 0));
    else idx.sort((a, b) => compareBytes(enc[a]!.name, enc[b]!.name));
    order = idx.map((i) => enc[i]!);
    yield;
  }
  let size = 12;
  for (const { bytes } of order) size += bytes.length;
  if (extension) size += extension.length;
  const out = new Uint8Array(size + 20);
  const view = new DataView(out.buffer);
  out.set(utf8('DIRC'), 0);
  view.setUint32(4, 2);
  view.setUint32(8, order.length);
  let at = 12;
  for (let i = 0; i < order.length; i++) {
    if (i % STEP === STEP - 1) yield;
    const { bytes } = order[i]!;
    out.set(bytes, at);
    at += bytes.length;
  }
  if (extension) out.set(extension, at);
  yield;
  out.set(fromHex(codec.sha1(out.subarray(0, size))), size);
  return out;
}

/** The split-index `link` extension of an index: its shared index, and which of its entries go. */
interface Link {
  shared: string;
  deleted: number[];
  replaced: number[];
}

/**
 * Parse an index written by git or by us (versions 2 and 3; extensions other than `link` are
 * skipped). Throws `REPO_CORRUPT` for anything else, which makes the caller rebuild the working
 * tree, and for a split index, whose entries are in two files: read those with {@link readIndex}.
 */
export function parseIndex(data: Uint8Array, codec: Codec): IndexEntry[] {
  const { entries, link } = parseParts(data, codec);
  if (link !== null)
    throw new EntityGitError('REPO_CORRUPT', 'the index is split (it names a shared index): read it with readIndex');
  return entries;
}

/** A shared index (`sharedindex.<oid>`) and the entry objects of the index taken from it. */
export interface SharedIndex {
  oid: string;
  members: ReadonlySet<IndexEntry>;
}

/**
 * The entries of `gitdir`'s index (null: there is none), a split index merged with its shared
 * index; `shared` is that shared index when none of its entries was deleted or replaced. Throws
 * `REPO_CORRUPT` when either file cannot be read as git would.
 */
export async function readIndex(
  store: Store,
  gitdir: string,
  data?: Uint8Array | null,
): Promise<{ entries: IndexEntry[]; shared: SharedIndex | null } | null> {
  const bytes = data === undefined ? await store.read(joinPath(gitdir, 'index')) : data;
  if (bytes === null) return null;
  const { entries, link } = parseParts(bytes, store.codec);
  if (link === null) return { entries, shared: null };
  const sharedData = await store.read(joinPath(gitdir, `sharedindex.${link.shared}`));
  if (sharedData === null)
    throw new EntityGitError(
      'REPO_CORRUPT',
      `the index names a shared index that is missing: sharedindex.${link.shared}`,
    );
  const base = parseParts(sharedData, store.codec);
  if (base.link !== null || toHex(sharedData.subarray(sharedData.length - 20)) !== link.shared) {
    throw new EntityGitError('REPO_CORRUPT', `sharedindex.${link.shared} is not the shared index its name says`);
  }
  const deleted = new Set(link.deleted);
  const replaced = new Map<number, IndexEntry>();
  let r = 0;
  for (const at of link.replaced) {
    const e = entries[r++];
    const from = base.entries[at];
    if (e === undefined || from === undefined)
      throw new EntityGitError('REPO_CORRUPT', 'the split index replaces entries it does not hold');
    replaced.set(at, e.path === '' ? { ...e, path: from.path } : e);
  }
  const merged: IndexEntry[] = [];
  const members = new Set<IndexEntry>();
  base.entries.forEach((e, i) => {
    if (deleted.has(i)) return;
    const instead = replaced.get(i);
    if (instead) merged.push(instead);
    else {
      merged.push(e);
      members.add(e);
    }
  });
  const added = entries.slice(r);
  if (added.some((e) => e.path === ''))
    throw new EntityGitError('REPO_CORRUPT', 'an entry of the split index has no path');
  merged.push(...added);
  if (added.length > 0) merged.sort((a, b) => compareBytes(utf8(a.path), utf8(b.path)));
  return { entries: merged, shared: deleted.size === 0 && replaced.size === 0 ? { oid: link.shared, members } : null };
}

function parseParts(data: Uint8Array, codec: Codec): { entries: IndexEntry[]; link: Link | null } {
  const bad = (why: string): never => {
    throw new EntityGitError('REPO_CORRUPT', `the index cannot be read: ${why}`);
  };
  if (data.length < 32 || fromUtf8(data.subarray(0, 4)) !== 'DIRC') bad('no DIRC header');
  if (codec.sha1(data.subarray(0, data.length - 20)) !== toHex(data.subarray(data.length - 20)))
    bad('checksum mismatch');
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const version = view.getUint32(4);
  if (version !== 2 && version !== 3) bad(`version ${version}`);
  const count = view.getUint32(8);
  const entries: IndexEntry[] = [];
  let at = 12;
  for (let i = 0; i < count; i++) {
    if (at + 62 > data.length - 20) bad('truncated');
    const f = (k: number) => view.getUint32(at + k * 4);
    const flags = view.getUint16(at + 60);
    const extended = (flags & 0x4000) !== 0;
    const nameAt = at + 62 + (extended ? 2 : 0);
    const end = data.indexOf(0, nameAt);
    if (end < 0) bad('unterminated path');
    if ((flags >> 12) & 0x3) bad('unmerged entries');
    entries.push({
      path: fromUtf8(data.subarray(nameAt, end)),
      oid: toHex(data.subarray(at + 40, at + 60)),
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
    });
    at += Math.ceil((end - at + 1) / 8) * 8;
  }
  let link: Link | null = null;
  const end = data.length - 20;
  while (at + 8 <= end) {
    const size = view.getUint32(at + 4);
    if (at + 8 + size > end) bad('truncated extension');
    if (fromUtf8(data.subarray(at, at + 4)) === 'link') {
      if (size < 20) bad('link extension too short');
      const body = data.subarray(at + 8, at + 8 + size);
      const deleted: number[] = [];
      const replaced: number[] = [];
      if (size > 20) {
        const next = ewahBits(body, 20, deleted, bad);
        if (ewahBits(body, next, replaced, bad) !== body.length) bad('garbage at the end of the link extension');
      }
      link = { shared: toHex(body.subarray(0, 20)), deleted, replaced };
    }
    at += 8 + size;
  }
  if (at !== end) bad('trailing bytes');
  return { entries, link };
}

/**
 * The set bits of a serialized EWAH bitmap (git's ewah/ewah_io.c) at `at` in `data`, in order;
 * returns where it ends. Each marker word holds a run bit (bit 0), a run length in words (bits
 * 1–32) and the number of literal words after it (bits 33–63).
 */
function ewahBits(data: Uint8Array, at: number, into: number[], bad: (why: string) => never): number {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (at + 8 > data.length) bad('truncated bitmap');
  const bitSize = view.getUint32(at);
  const words = view.getUint32(at + 4);
  // A bit per entry of the shared index: an index of more entries than this is not one git wrote.
  if (bitSize > 1 << 24) bad('a bitmap larger than any index');
  let p = at + 8;
  if (p + words * 8 + 4 > data.length) bad('truncated bitmap');
  let bit = 0;
  for (let w = 0; w < words; ) {
    const hi = view.getUint32(p);
    const lo = view.getUint32(p + 4);
    p += 8;
    w++;
    const runBit = lo & 1;
    const run = ((lo >>> 1) | ((hi & 1) << 31)) >>> 0;
    const literals = hi >>> 1;
    if (runBit) for (let k = 0; k < run * 64 && bit + k < bitSize; k++) into.push(bit + k);
    bit += run * 64;
    for (let l = 0; l < literals; l++, w++) {
      if (w >= words) bad('bitmap literal words past its end');
      for (const [half, base] of [
        [view.getUint32(p + 4), 0],
        [view.getUint32(p), 32],
      ] as const) {
        for (let b = 0; b < 32; b++) if ((half >>> b) & 1) into.push(bit + base + b);
      }
      p += 8;
      bit += 64;
    }
  }
  return p + 4;
}
