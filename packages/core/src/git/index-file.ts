import { EntityGitError } from '../errors.js';
import type { StorageStat } from '../storage/storage.js';
import { fromUtf8, utf8 } from '../storage/store.js';
import type { Codec } from './codec.js';
import { fromHex, toHex } from './codec.js';

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
    path, oid, mode: 0o100644, ctimeSec, ctimeNsec, mtimeSec, mtimeNsec,
    dev: st.dev ?? 0, ino: st.ino ?? 0, uid: st.uid ?? 0, gid: st.gid ?? 0, size: st.size,
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
    const fields = [e.ctimeSec, e.ctimeNsec, e.mtimeSec, e.mtimeNsec, e.dev, e.ino, e.mode, e.uid, e.gid, e.size];
    fields.forEach((f, i) => view.setUint32(i * 4, u32(f)));
    bytes.set(fromHex(e.oid), 40);
    view.setUint16(60, Math.min(name.length, 0xfff));
    bytes.set(name, 62);
    done = { name, bytes, ascii: ASCII.test(e.path) };
    encoded.set(e, done);
  }
  return done;
}

/** Index file (version 2) bytes for `entries`, sorted by path as git requires, with the checksum. */
export function buildIndex(entries: readonly IndexEntry[], codec: Codec): Uint8Array {
  const enc = entries.map(encodeEntry);
  let ascii = true;
  let sorted = true;
  for (let i = 0; i < enc.length; i++) {
    if (!enc[i]!.ascii) ascii = false;
    if (i > 0 && !(entries[i - 1]!.path < entries[i]!.path)) sorted = false;
  }
  let order: Encoded[] = enc;
  // ASCII paths (every path the mirror writes) sort the same as strings as they do as bytes;
  // the mirror keeps its entries in order, so mostly there is nothing to sort.
  if (!(sorted && ascii)) {
    const idx = enc.map((_, i) => i);
    if (ascii) idx.sort((a, b) => (entries[a]!.path < entries[b]!.path ? -1 : entries[a]!.path > entries[b]!.path ? 1 : 0));
    else idx.sort((a, b) => compareBytes(enc[a]!.name, enc[b]!.name));
    order = idx.map((i) => enc[i]!);
  }
  let size = 12;
  for (const { bytes } of order) size += bytes.length;
  const out = new Uint8Array(size + 20);
  const view = new DataView(out.buffer);
  out.set(utf8('DIRC'), 0);
  view.setUint32(4, 2);
  view.setUint32(8, order.length);
  let at = 12;
  for (const { bytes } of order) {
    out.set(bytes, at);
    at += bytes.length;
  }
  out.set(fromHex(codec.sha1(out.subarray(0, size))), size);
  return out;
}

/**
 * Parse an index written by git or by us (versions 2 and 3; extensions are skipped). Throws
 * `REPO_CORRUPT` for anything else, which makes the caller rebuild the working tree.
 */
export function parseIndex(data: Uint8Array, codec: Codec): IndexEntry[] {
  const bad = (why: string): never => {
    throw new EntityGitError('REPO_CORRUPT', `the index cannot be read: ${why}`);
  };
  if (data.length < 32 || fromUtf8(data.subarray(0, 4)) !== 'DIRC') bad('no DIRC header');
  if (codec.sha1(data.subarray(0, data.length - 20)) !== toHex(data.subarray(data.length - 20))) bad('checksum mismatch');
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
      path: fromUtf8(data.subarray(nameAt, end)), oid: toHex(data.subarray(at + 40, at + 60)),
      ctimeSec: f(0), ctimeNsec: f(1), mtimeSec: f(2), mtimeNsec: f(3), dev: f(4), ino: f(5), mode: f(6), uid: f(7), gid: f(8), size: f(9),
    });
    at += Math.ceil((end - at + 1) / 8) * 8;
  }
  return entries;
}
