// git's pack delta format, both ways: read (a chain of deltas composed into runs, then applied)
// and written (the prefix-and-suffix delta the pack builder makes of a tree against its last
// version).
import { EntityGitError } from '../errors.js';

/**
 * A delta as a list of runs making its target: a copy of `len` bytes at `off` in the base (`src`
 * null), or bytes of `src` (an inserted run, a view into a delta).
 */
interface Runs {
  src: (Uint8Array | null)[];
  off: number[];
  len: number[];
  /** The base's size the delta was made for, and its target's. */
  baseSize: number;
  size: number;
}

/** git's delta format read into runs, every copy and insert checked against the sizes it states. */
function deltaRuns(delta: Uint8Array, where: string): Runs {
  let i = 0;
  const varint = (): number => {
    let n = 0;
    let shift = 1;
    for (;;) {
      const c = delta[i++];
      if (c === undefined) throw new EntityGitError('OBJECT_CORRUPT', `${where}: the delta is truncated`);
      n += (c & 0x7f) * shift;
      shift *= 128;
      if (!(c & 0x80)) return n;
    }
  };
  const runs: Runs = { src: [], off: [], len: [], baseSize: varint(), size: varint() };
  let at = 0;
  while (i < delta.length) {
    const op = delta[i++]!;
    if (op & 0x80) {
      let offset = 0;
      let n = 0;
      for (let k = 0; k < 4; k++) if (op & (1 << k)) offset += (delta[i++] ?? 0) * 2 ** (8 * k);
      for (let k = 0; k < 3; k++) if (op & (1 << (4 + k))) n += (delta[i++] ?? 0) * 2 ** (8 * k);
      if (i > delta.length) throw new EntityGitError('OBJECT_CORRUPT', `${where}: the delta is truncated`);
      if (n === 0) n = 0x10000;
      if (offset + n > runs.baseSize || at + n > runs.size)
        throw new EntityGitError('OBJECT_CORRUPT', `${where}: a delta copy out of range`);
      push(runs, null, offset, n);
      at += n;
    } else if (op > 0) {
      if (i + op > delta.length || at + op > runs.size)
        throw new EntityGitError('OBJECT_CORRUPT', `${where}: a delta insert out of range`);
      push(runs, delta, i, op);
      i += op;
      at += op;
    } else {
      throw new EntityGitError('OBJECT_CORRUPT', `${where}: delta opcode 0`);
    }
  }
  if (at !== runs.size)
    throw new EntityGitError('OBJECT_CORRUPT', `${where}: the delta made ${at} bytes, not ${runs.size}`);
  return runs;
}

/** A run appended, joined to the last one where it continues it. */
function push(runs: Runs, src: Uint8Array | null, off: number, len: number): void {
  const last = runs.len.length - 1;
  if (last >= 0 && runs.src[last] === src && runs.off[last]! + runs.len[last]! === off) runs.len[last]! += len;
  else {
    runs.src.push(src);
    runs.off.push(off);
    runs.len.push(len);
  }
}

/**
 * `upper` (a delta over `lower`'s target) rewritten over `lower`'s base: each copy of `upper`
 * becomes the runs of `lower` that made those bytes — copies of `lower`'s base, or its inserts.
 */
function compose(upper: Runs, lower: Runs): Runs {
  const out: Runs = { src: [], off: [], len: [], baseSize: lower.baseSize, size: upper.size };
  const starts = new Float64Array(lower.len.length);
  for (let j = 0, at = 0; j < lower.len.length; j++) {
    starts[j] = at;
    at += lower.len[j]!;
  }
  for (let k = 0; k < upper.len.length; k++) {
    const src = upper.src[k]!;
    if (src !== null) {
      push(out, src, upper.off[k]!, upper.len[k]!);
      continue;
    }
    let from = upper.off[k]!;
    let left = upper.len[k]!;
    // The run of `lower` that made byte `from`: the last one starting at or before it.
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid]! <= from) lo = mid;
      else hi = mid - 1;
    }
    for (let j = lo; left > 0; j++) {
      const skip = from - starts[j]!;
      const n = Math.min(left, lower.len[j]! - skip);
      push(out, lower.src[j]!, lower.off[j]! + skip, n);
      from += n;
      left -= n;
    }
  }
  return out;
}

/**
 * The object at the top of a delta chain: `deltas[0]` made over the target of `deltas[1]`, and so
 * on down to the last, made over `base`. The deltas are composed into one and applied once.
 */
export function applyDeltas(base: Uint8Array, deltas: readonly Uint8Array[], where = 'delta'): Uint8Array {
  let runs = deltaRuns(deltas[0]!, where);
  for (let k = 1; k < deltas.length; k++) {
    const lower = deltaRuns(deltas[k]!, where);
    if (runs.baseSize !== lower.size)
      throw new EntityGitError(
        'OBJECT_CORRUPT',
        `${where}: the delta's base is ${runs.baseSize} bytes, not ${lower.size}`,
      );
    runs = compose(runs, lower);
  }
  if (runs.baseSize !== base.length)
    throw new EntityGitError(
      'OBJECT_CORRUPT',
      `${where}: the delta's base is ${runs.baseSize} bytes, not ${base.length}`,
    );
  const out = new Uint8Array(runs.size);
  for (let k = 0, at = 0; k < runs.len.length; k++) {
    const src = runs.src[k] ?? base;
    const off = runs.off[k]!;
    out.set(src.subarray(off, off + runs.len[k]!), at);
    at += runs.len[k]!;
  }
  return out;
}

/** git's delta format: the target rebuilt from copies of the base and inserted bytes. */
export function applyDelta(base: Uint8Array, delta: Uint8Array, where = 'delta'): Uint8Array {
  return applyDeltas(base, [delta], where);
}

/**
 * A delta (git's pack delta format) that rebuilds `target` from `base` by copying their common
 * prefix and suffix and inserting the rest: what a session tree is between two turns (the same
 * entries, a few added). Null when it would not be much smaller than the target.
 */
export function prefixSuffixDelta(base: Uint8Array, target: Uint8Array): Uint8Array | null {
  const max = Math.min(base.length, target.length);
  let prefix = 0;
  // The same memory (a tree {@link extendTree} wrote after its base): the prefix is all of it.
  if (base.buffer === target.buffer && base.byteOffset === target.byteOffset) prefix = max;
  // Four bytes at a time while both are aligned (a tree is often hundreds of kilobytes).
  else if (base.byteOffset % 4 === 0 && target.byteOffset % 4 === 0) {
    const a = new Uint32Array(base.buffer, base.byteOffset, max >>> 2);
    const b = new Uint32Array(target.buffer, target.byteOffset, max >>> 2);
    let w = 0;
    while (w < a.length && a[w] === b[w]) w++;
    prefix = w * 4;
  }
  while (prefix < max && base[prefix] === target[prefix]) prefix++;
  let suffix = 0;
  while (suffix < max - prefix && base[base.length - 1 - suffix] === target[target.length - 1 - suffix]) suffix++;
  const middle = target.length - suffix - prefix;
  const inserts = middle + Math.ceil(middle / 127);
  if (inserts > target.length / 2) return null;
  // Written straight into bytes: two sizes, a copy op of at most 8 bytes per 16 MB, the inserts.
  const out = new Uint8Array(20 + 8 * (Math.ceil(prefix / 0xffffff) + Math.ceil(suffix / 0xffffff)) + inserts);
  let o = deltaSize(out, 0, base.length);
  o = deltaSize(out, o, target.length);
  o = deltaCopy(out, o, 0, prefix);
  for (let i = prefix, end = target.length - suffix; i < end; i += 127) {
    const n = Math.min(end - i, 127);
    out[o++] = n;
    for (let k = 0; k < n; k++) out[o + k] = target[i + k]!;
    o += n;
  }
  o = deltaCopy(out, o, base.length - suffix, suffix);
  return o > target.length / 2 ? null : out.subarray(0, o);
}

/** A delta's size field (7 bits a byte, least significant first) written at `o`; returns the end. */
function deltaSize(out: Uint8Array, o: number, n: number): number {
  while (n >= 0x80) {
    out[o++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  out[o++] = n;
  return o;
}

/** Copy ops for `size` bytes of the base from `offset`, at most 16 MB each, written at `o`; returns the end. */
function deltaCopy(out: Uint8Array, o: number, offset: number, size: number): number {
  for (let done = 0; done < size; ) {
    const n = Math.min(size - done, 0xffffff);
    const at = offset + done;
    const opAt = o++;
    let op = 0x80;
    for (let i = 0; i < 4; i++)
      if ((at >>> (8 * i)) & 0xff) {
        op |= 1 << i;
        out[o++] = (at >>> (8 * i)) & 0xff;
      }
    for (let i = 0; i < 3; i++)
      if ((n >>> (8 * i)) & 0xff) {
        op |= 1 << (4 + i);
        out[o++] = (n >>> (8 * i)) & 0xff;
      }
    out[opAt] = op;
    done += n;
  }
  return o;
}
