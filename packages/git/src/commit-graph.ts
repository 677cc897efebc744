import { fromHex, toHex } from './bytes/hex.js';
import type { Codec } from './codec/codec.js';

/**
 * git's commit-graph file (`objects/info/commit-graph`, version 1, SHA-1): every commit's tree,
 * parents and generation, by position. Native git uses it for `log` and reachability, checks it
 * in `fsck`, and reads a commit from it instead of from its object; the mirror uses it to place a
 * commit on its branch (turn N of M, its neighbours) without inflating every commit down the
 * chain. Written where commits are packed: a backfill's pack, the packers.
 */

/** One commit of the graph. */
export interface GraphCommit {
  oid: string;
  tree: string;
  parents: readonly string[];
  /** Committer time, seconds since the epoch. */
  time: number;
}

export const COMMIT_GRAPH_PATH = 'objects/info/commit-graph';

// The format's numbers, shared with the writer (commit-graph-write.ts).
export const NO_PARENT = 0x70000000;
export const HEADER = 8;
export const CHUNK_ENTRY = 12;
export const OIDF = 0x4f494446;
export const OIDL = 0x4f49444c;
export const CDAT = 0x43444154;
export const CDAT_WIDTH = 36;

/** A commit-graph file, read. Positions index its commits in object id order. */
export class CommitGraph {
  private readonly bytes: Uint8Array;
  private readonly view: DataView;
  readonly count: number;
  /** Offsets of the fan-out, object id and commit data chunks. */
  private readonly fanout: number;
  private readonly oids: number;
  private readonly data: number;

  private constructor(parts: {
    bytes: Uint8Array;
    view: DataView;
    count: number;
    fanout: number;
    oids: number;
    data: number;
  }) {
    this.bytes = parts.bytes;
    this.view = parts.view;
    this.count = parts.count;
    this.fanout = parts.fanout;
    this.oids = parts.oids;
    this.data = parts.data;
  }

  /**
   * The graph in `bytes`, or null when it is not one this reader takes: a bad checksum, another
   * version or hash, a chain of graphs, a missing chunk. Chunks it does not use (git's
   * generation v2, Bloom filters, extra edges) are skipped.
   */
  static parse(bytes: Uint8Array, codec: Codec): CommitGraph | null {
    if (bytes.length < HEADER + 2 * CHUNK_ENTRY + 20) return null;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (view.getUint32(0) !== 0x43475048 || bytes[4] !== 1 || bytes[5] !== 1 || bytes[7] !== 0) return null;
    if (codec.sha1(bytes.subarray(0, bytes.length - 20)) !== toHex(bytes.subarray(bytes.length - 20))) return null;
    const chunks = new Map<number, [number, number]>();
    const count = bytes[6]!;
    if (HEADER + (count + 1) * CHUNK_ENTRY > bytes.length) return null;
    for (let k = 0; k < count; k++) {
      const at = HEADER + k * CHUNK_ENTRY;
      const start = Number(view.getBigUint64(at + 4));
      const end = Number(view.getBigUint64(at + CHUNK_ENTRY + 4));
      if (start > end || end > bytes.length - 20) return null;
      chunks.set(view.getUint32(at), [start, end]);
    }
    const f = chunks.get(OIDF);
    const l = chunks.get(OIDL);
    const d = chunks.get(CDAT);
    if (!f || !l || !d || f[1] - f[0] !== 1024) return null;
    const n = view.getUint32(f[0] + 255 * 4);
    if (l[1] - l[0] !== 20 * n || d[1] - d[0] !== CDAT_WIDTH * n) return null;
    return new CommitGraph({ bytes, view, count: n, fanout: f[0], oids: l[0], data: d[0] });
  }

  /** The position of `oid`, or -1. */
  positionOf(oid: string): number {
    const want = fromHex(oid);
    let lo = want[0] === 0 ? 0 : this.view.getUint32(this.fanout + (want[0]! - 1) * 4);
    let hi = this.view.getUint32(this.fanout + want[0]! * 4);
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const at = this.oids + 20 * mid;
      let cmp = 0;
      for (let i = 0; i < 20 && cmp === 0; i++) cmp = this.bytes[at + i]! - want[i]!;
      if (cmp === 0) return mid;
      if (cmp < 0) lo = mid + 1;
      else hi = mid;
    }
    return -1;
  }

  oidAt(pos: number): string {
    return toHex(this.bytes.subarray(this.oids + 20 * pos, this.oids + 20 * pos + 20));
  }

  /** The position of the first parent, -1 for a root; null when it is not in this graph (an octopus edge). */
  firstParent(pos: number): number | null {
    const p = this.view.getUint32(this.data + CDAT_WIDTH * pos + 20);
    if (p === NO_PARENT) return -1;
    return p < this.count ? p : null;
  }

  /** The topological level git recorded: a root is 1. */
  generation(pos: number): number {
    return this.view.getUint32(this.data + CDAT_WIDTH * pos + 28) >>> 2;
  }

  /** The commit at `pos`; null when it has more parents than two (git keeps those elsewhere). */
  commitAt(pos: number): GraphCommit | null {
    const at = this.data + CDAT_WIDTH * pos;
    const parents: string[] = [];
    for (const k of [20, 24]) {
      const p = this.view.getUint32(at + k);
      if (p === NO_PARENT) break;
      if (p >= this.count) return null;
      parents.push(this.oidAt(p));
    }
    const time = (this.view.getUint32(at + 28) & 3) * 2 ** 32 + this.view.getUint32(at + 32);
    return { oid: this.oidAt(pos), tree: toHex(this.bytes.subarray(at, at + 20)), parents, time };
  }
}

/** Every commit of `graph`, as the writer's `buildCommitGraph` takes them; null when one has an octopus edge. */
export function graphCommits(graph: CommitGraph): GraphCommit[] | null {
  const out: GraphCommit[] = [];
  for (let i = 0; i < graph.count; i++) {
    const c = graph.commitAt(i);
    if (c === null) return null;
    out.push(c);
  }
  return out;
}
