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
