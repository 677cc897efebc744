import { fromHex, hexInto, toHex } from './bytes/hex.js';
import type { Codec } from './codec/codec.js';
import { joinPath } from './storage/paths.js';
import type { Store } from './storage/store.js';
import { runAll, runPaused, type WorkSteps } from './work-steps.js';

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

const NO_PARENT = 0x70000000;
const HEADER = 8;
const CHUNK_ENTRY = 12;
const OIDF = 0x4f494446;
const OIDL = 0x4f49444c;
const CDAT = 0x43444154;
const CDAT_WIDTH = 36;

/**
 * The bytes of a commit-graph holding `commits`; null when it cannot hold them: a parent that is
 * not among them (a graph names parents by position), or a commit with more than two parents.
 * Generations are topological levels (a root is 1), as git writes them without its v2 chunk.
 */
export function buildCommitGraph(commits: readonly GraphCommit[], codec: Codec): Uint8Array | null {
  return runAll(buildCommitGraphSteps(commits, codec));
}

/** Commits handled between two pauses of {@link buildCommitGraphSteps}. */
const STEP = 256;

/**
 * {@link buildCommitGraph} in steps: a generator that pauses (`yield`) every {@link STEP} commits
 * of each pass, so a caller can give its host's event loop a turn while the graph of a long
 * backfill is made. Returns the same bytes.
 */
export function* buildCommitGraphSteps(commits: readonly GraphCommit[], codec: Codec): WorkSteps<Uint8Array | null> {
  const unique = new Map<string, GraphCommit>();
  for (let i = 0; i < commits.length; i++) {
    if (i % STEP === STEP - 1) yield;
    unique.set(commits[i]!.oid, commits[i]!);
  }
  const sorted = [...unique.values()];
  yield;
  sorted.sort((a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0));
  yield;
  const pos = new Map<string, number>();
  for (let i = 0; i < sorted.length; i++) {
    if (i % STEP === STEP - 1) yield;
    pos.set(sorted[i]!.oid, i);
  }
  for (let i = 0; i < sorted.length; i++) {
    if (i % STEP === STEP - 1) yield;
    const c = sorted[i]!;
    if (c.parents.length > 2) return null;
    for (const p of c.parents) if (!pos.has(p)) return null;
  }
  // Topological levels, parents first, without recursion (chains are thousands deep).
  const generation = new Uint32Array(sorted.length);
  const onStack = new Uint8Array(sorted.length);
  let visited = 0;
  for (let i = 0; i < sorted.length; i++) {
    if (generation[i] !== 0) continue;
    const stack = [i];
    onStack[i] = 1;
    while (stack.length > 0) {
      const at = stack.at(-1)!;
      let level = 1;
      let pending = false;
      for (const p of sorted[at]!.parents) {
        const q = pos.get(p)!;
        if (generation[q] === 0) {
          if (onStack[q]) return null; // a cycle: no such history
          stack.push(q);
          onStack[q] = 1;
          pending = true;
        } else level = Math.max(level, generation[q]! + 1);
      }
      if (pending) continue;
      generation[at] = Math.min(level, 0x3fffffff);
      onStack[at] = 0;
      stack.pop();
      if (++visited % STEP === 0) yield;
    }
  }
  const n = sorted.length;
  const chunks: [number, number][] = [
    [OIDF, 1024],
    [OIDL, 20 * n],
    [CDAT, CDAT_WIDTH * n],
  ];
  const tableEnd = HEADER + (chunks.length + 1) * CHUNK_ENTRY;
  const size = tableEnd + chunks.reduce((a, [, len]) => a + len, 0);
  const out = new Uint8Array(size + 20);
  const view = new DataView(out.buffer);
  out.set([0x43, 0x47, 0x50, 0x48, 1, 1, chunks.length, 0], 0); // CGPH, version 1, SHA-1, chunks, no base graphs
  let offset = tableEnd;
  chunks.forEach(([id, len], k) => {
    view.setUint32(HEADER + k * CHUNK_ENTRY, id);
    view.setBigUint64(HEADER + k * CHUNK_ENTRY + 4, BigInt(offset));
    offset += len;
  });
  view.setBigUint64(HEADER + chunks.length * CHUNK_ENTRY + 4, BigInt(offset));
  const fanout = tableEnd;
  const oids = fanout + 1024;
  const data = oids + 20 * n;
  const counts = new Uint32Array(256);
  for (let i = 0; i < sorted.length; i++) {
    if (i % STEP === STEP - 1) yield;
    const c = sorted[i]!;
    counts[parseInt(c.oid.slice(0, 2), 16)]!++;
    hexInto(c.oid, out, oids + 20 * i);
    const at = data + CDAT_WIDTH * i;
    hexInto(c.tree, out, at);
    view.setUint32(at + 20, c.parents[0] === undefined ? NO_PARENT : pos.get(c.parents[0])!);
    view.setUint32(at + 24, c.parents[1] === undefined ? NO_PARENT : pos.get(c.parents[1])!);
    const time = Math.max(0, Math.min(c.time, 2 ** 34 - 1));
    view.setUint32(at + 28, ((generation[i]! << 2) | Math.floor(time / 2 ** 32)) >>> 0);
    view.setUint32(at + 32, time >>> 0);
  }
  let total = 0;
  for (let b = 0; b < 256; b++) view.setUint32(fanout + 4 * b, (total += counts[b]!));
  yield;
  out.set(fromHex(codec.sha1(out.subarray(0, size))), size);
  return out;
}

/** A commit-graph file, read. Positions index its commits in object id order. */
export class CommitGraph {
  private constructor(
    private readonly bytes: Uint8Array,
    private readonly view: DataView,
    readonly count: number,
    private readonly fanout: number,
    private readonly oids: number,
    private readonly data: number,
  ) {}

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
    return new CommitGraph(bytes, view, n, f[0], l[0], d[0]);
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

/** Every commit of `graph`, as {@link buildCommitGraph} takes them; null when one has an octopus edge. */
export function graphCommits(graph: CommitGraph): GraphCommit[] | null {
  const out: GraphCommit[] = [];
  for (let i = 0; i < graph.count; i++) {
    const c = graph.commitAt(i);
    if (c === null) return null;
    out.push(c);
  }
  return out;
}

/**
 * Write the commit-graph of `gitdir` for `commits` and those of the graph already there (all of
 * them must be in the repository already). Nothing is written when the two do not make a
 * whole graph (a parent in neither); the graph there, if any, stays, still true if incomplete.
 * `pause`, when given, is asked between steps of making the graph and awaited when it answers a
 * promise (as the pack writer's); the bytes are the same.
 */
export async function writeCommitGraph(
  store: Store,
  gitdir: string,
  commits: readonly GraphCommit[],
  pause?: () => Promise<void> | undefined,
): Promise<boolean> {
  const path = joinPath(gitdir, COMMIT_GRAPH_PATH);
  const existing = await store.read(path);
  const old = existing === null ? null : CommitGraph.parse(existing, store.codec);
  const before = old === null ? [] : graphCommits(old);
  const steps = before === null ? null : buildCommitGraphSteps([...before, ...commits], store.codec);
  const all = steps === null ? null : pause ? await runPaused(steps, pause) : runAll(steps);
  if (all === null) return false;
  await store.writeAtomic(path, all);
  return true;
}
