// Writing git's commit-graph file (the reader, and what the format is, are in commit-graph.ts): a
// module of its own, so what only reads a graph (a replay) does not carry the writer.
import { fromHex, hexInto } from './bytes/hex.js';
import type { Codec } from './codec/codec.js';
import {
  CDAT,
  CDAT_WIDTH,
  CHUNK_ENTRY,
  COMMIT_GRAPH_PATH,
  CommitGraph,
  type GraphCommit,
  graphCommits,
  HEADER,
  NO_PARENT,
  OIDF,
  OIDL,
} from './commit-graph.js';
import { joinPath } from './storage/paths.js';
import type { Store } from './storage/store.js';
import { runAll, runPaused, type WorkSteps } from './work-steps.js';

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
  const generation = yield* generations(sorted, pos);
  if (generation === null) return null;
  return yield* graphBytes(sorted, pos, generation, codec);
}

/**
 * The topological level of each of `sorted` (parents first, without recursion: chains are
 * thousands deep), pausing every {@link STEP} commits; null on a cycle (no such history).
 */
function* generations(sorted: readonly GraphCommit[], pos: ReadonlyMap<string, number>): WorkSteps<Uint32Array | null> {
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
  return generation;
}

/** The file's bytes: header, chunk table, OIDF, OIDL, CDAT and the checksum, pausing every {@link STEP} commits. */
function* graphBytes(
  sorted: readonly GraphCommit[],
  pos: ReadonlyMap<string, number>,
  generation: Uint32Array,
  codec: Codec,
): WorkSteps<Uint8Array> {
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
