import {
  type GraphCommit,
  frame,
  parseCommit,
  unframe,
  type ObjectStore,
  countPacks,
  PackBuilder,
  type Store,
} from '@entity-git/git';
import type { MirrorContext } from '../context.js';
import type { Repo } from '../repo/repo.js';

/** A turn writes its objects as a pack while the repository holds fewer packs than this. */
export const TURN_PACKS_MAX = 32;

/** Where a sync's new objects go: loose files, or (a backfill) one pack written before any ref moves. */
export interface ObjectSink {
  /** `path`: where a tree sits (`messages`, `messages/003`), to be a delta of the last one there. */
  write(type: 'blob' | 'tree' | 'commit', content: Uint8Array, path?: string): Promise<string>;
  writeRaw(raw: Uint8Array, oid: string): Promise<void>;
  /** Objects written so far. */
  readonly count: number;
  /** What `finish()` wrote as a pack (objects in it, the pack file's bytes); none for loose objects. */
  readonly packed: { objects: number; bytes: number };
  finish(): Promise<void>;
}

/**
 * Loose objects, written together: each write is queued, and the queue is written when it grows
 * large and at `finish()` — blobs and trees at once (concurrent writes overlap their round trips,
 * which on IndexedDB are most of a write's cost), then commits one by one, so an object is never
 * on disk before what it names. A large object is written at once, so a turn never holds more
 * than about {@link QUEUED_BYTES} of queued objects besides it. Nothing queued is written when
 * the sync fails before `finish()`.
 */
export function looseSink(objects: ObjectStore): ObjectSink {
  const start = objects.written;
  let queue: { raw: Uint8Array; oid: string; commit: boolean }[] = [];
  let queued = 0;
  const drain = async () => {
    const now = queue;
    queue = [];
    queued = 0;
    await Promise.all(now.filter((o) => !o.commit).map((o) => objects.writeRaw(o.raw, o.oid)));
    for (const o of now) if (o.commit) await objects.writeRaw(o.raw, o.oid);
  };
  const add = async (raw: Uint8Array, oid: string, commit: boolean) => {
    if (raw.length >= QUEUED_BYTES) {
      await drain();
      await objects.writeRaw(raw, oid);
      return;
    }
    queue.push({ raw, oid, commit });
    queued += raw.length;
    if (queued >= QUEUED_BYTES) await drain();
  };
  return {
    write: async (type, content) => {
      const raw = frame(type, content);
      const oid = objects.hashFramed(raw);
      await add(raw, oid, type === 'commit');
      return oid;
    },
    writeRaw: (raw, oid) => add(raw, oid, false),
    get count() {
      return objects.written - start;
    },
    packed: { objects: 0, bytes: 0 },
    finish: drain,
  };
}
/** Bytes of loose objects a sync queues before it writes them. */
const QUEUED_BYTES = 4 << 20;

/**
 * Objects of a turn this large or larger are written loose, not into its pack: the pack is built
 * in memory and hashed whole for its checksum, so a large object (a flat messages/ tree of
 * thousands of entries, a big tool output) would be hashed twice for the one file it saves
 * (measured by the commit bench: at 10,000 flat messages, a turn with its tree in the pack cost
 * more than one with every object loose).
 */
const TURN_PACK_OBJECT_MAX = 64 << 10;

/**
 * A turn's objects as one pack, written at `finish()` before any ref moves; an object of
 * {@link TURN_PACK_OBJECT_MAX} or more is written loose at once instead. Trees are stored, not
 * compressed, as loose trees are (the packer compresses them). A large tree is therefore on disk
 * before the pack holding the blobs it names: neither is reachable until the ref moves, git's fsck
 * does not follow an unreachable tree, and a sync after a crash finds the tree intact and writes
 * the rest again.
 */
export function turnPackSink(store: Store, repo: Repo): ObjectSink {
  const builder = new PackBuilder(store, { storeTrees: true });
  const start = repo.objects.written;
  const packed = { objects: 0, bytes: 0 };
  return {
    packed,
    async write(type, content) {
      if (content.length >= TURN_PACK_OBJECT_MAX) {
        const raw = frame(type, content);
        return repo.objects.writeRaw(raw, repo.objects.hashFramed(raw));
      }
      const oid = repo.objects.hash(type, content);
      builder.add(oid, type, content, null);
      return oid;
    },
    async writeRaw(raw, oid) {
      if (raw.length >= TURN_PACK_OBJECT_MAX) await repo.objects.writeRaw(raw, oid);
      else builder.add(oid, 'blob', unframe(raw), null);
    },
    get count() {
      return builder.count + repo.objects.written - start;
    },
    async finish() {
      const w = await builder.write(repo.gitdir);
      if (w !== null) Object.assign(packed, { objects: w.oids.length, bytes: w.bytes });
    },
  };
}

/**
 * A backfill's (or a repair's) objects as one pack, and its commits in a new commit-graph.
 * `pause`: asked between slices of finishing the pack (see {@link PackBuilder.write}). `onDemand`
 * loads the graph's writer (`mirror/on-demand.ts`: only a backfill writes a graph).
 */
export function packSink(
  store: Store,
  repo: Repo,
  onDemand: MirrorContext['onDemand'],
  pause?: () => Promise<void> | undefined,
): ObjectSink {
  const builder = new PackBuilder(store);
  const commits: GraphCommit[] = [];
  const packed = { objects: 0, bytes: 0 };
  return {
    packed,
    async write(type, content, path) {
      const oid = repo.objects.hash(type, content);
      if (type === 'tree' && path !== undefined) builder.addTree(oid, content, path);
      else builder.add(oid, type, content, null);
      if (type === 'commit') {
        // The header alone: the graph needs no message.
        const c = parseCommit(content.subarray(0, headerEnd(content)));
        commits.push({ oid, tree: c.tree, parents: c.parents, time: c.time });
      }
      return oid;
    },
    async writeRaw(raw, oid) {
      builder.add(oid, 'blob', unframe(raw), null);
    },
    get count() {
      return builder.count;
    },
    async finish() {
      const w = await builder.write(repo.gitdir, pause);
      if (w !== null) Object.assign(packed, { objects: w.oids.length, bytes: w.bytes });
      // The pack is in place: its commits go into the commit-graph (replay places a commit on
      // its branch from it). A history that began before this pack has no graph to join: none.
      const { writeCommitGraph } = await onDemand();
      await writeCommitGraph(store, repo.gitdir, commits, pause);
    },
  };
}

/** Where a commit's header ends: its first blank line (the whole commit when it has none). */
function headerEnd(commit: Uint8Array): number {
  for (let i = 1; i < commit.length; i++) if (commit[i] === 0x0a && commit[i - 1] === 0x0a) return i - 1;
  return commit.length;
}

/** Where a live turn's objects go: a pack of its own while the repository has room for one. */
export async function turnSink(ctx: MirrorContext, repo: Repo): Promise<ObjectSink> {
  if (!ctx.packTurns) return looseSink(repo.objects);
  return (await countPacks(ctx.store, repo.gitdir)) < TURN_PACKS_MAX
    ? turnPackSink(ctx.store, repo)
    : looseSink(repo.objects);
}
