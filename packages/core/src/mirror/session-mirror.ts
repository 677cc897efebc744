import type { DagSource } from '../dag/dag-source.js';
import { EntityGitError, isEntityGitError } from '../errors.js';
import {
  buildIndex,
  buildSplitIndex,
  entryFromStat,
  readIndex,
  type IndexEntry,
  type SharedIndex,
} from '../git/index-file.js';
import {
  assertIdentity,
  buildCommit,
  buildTree,
  extendTree,
  frame,
  isOid,
  unframe,
  ObjectStore,
  parseCommit,
  parseTree,
  type Identity,
  type TreeEntry,
} from '../git/objects.js';
import { acquireLockFile, RefStore } from '../git/refs.js';
import { canonicalJson, canonicalJsonBytes } from '../model/canonical-json.js';
import {
  commitMessage,
  defaultMetadataKeys,
  nodeFacts,
  parseTrailers,
  turnTime,
  type MetadataKeys,
} from '../model/commit-message.js';
import { immutableMeta, REPO_FORMAT } from '../model/session-meta.js';
import { derive, type BranchPlan, type Derivation } from '../model/derive.js';
import { extendDerivation } from '../model/extend.js';
import { DEFAULT_IDENTITY } from '../model/identity.js';
import { syncMetaRef } from './meta-ref.js';
import { verifyFormatAndMeta } from './verify-meta.js';
import { backUpFormat1, configuredFormat, formatFromTrees, withFormat } from './repo-format.js';
import { damageDifferences, inspectRepository, scrubRepository } from './repo-scrub.js';
import { mirrorFiles, worktreeDamage, worktreeDamaged, worktreeDifferences } from './worktree-check.js';
import { PackBuilder } from '../git/pack-writer.js';
import { countPacks } from '../git/pack-reader.js';
import { CommitGraph, COMMIT_GRAPH_PATH, writeCommitGraph, type GraphCommit } from '../git/commit-graph.js';
import { toHex } from '../git/codec.js';
import { assertId, messageFileName, sessionDirName } from '../model/names.js';
import type { DagNode, JsonValue, Session } from '../model/types.js';
import { validateNode, validateSession } from '../model/validate.js';
import type { Storage, StorageStat } from '../storage/storage.js';
import { memoryStorage } from '../storage/memory-storage.js';
import { fromUtf8, joinPath, Store, utf8 } from '../storage/store.js';
import { LIVE_STATES, remember, StateCache, type Known, type LiveState, type StateDelta } from './repo-state.js';
import type {
  BranchInfo,
  CommitInfo,
  Difference,
  Mirror,
  SyncOptions,
  SyncResult,
  TurnView,
  VerifyOptions,
  VerifyReport,
} from './mirror.js';
import type { Logger } from '../observe/logger.js';
import { observeMirror } from '../observe/observed.js';
import { unchangedSinceSync } from './unchanged.js';
import { DEFAULT_YIELD_EVERY_MS, HostYield } from './host-yield.js';

export { DEFAULT_IDENTITY };

export interface MirrorOptions {
  /** The DAG to follow. */
  dag: DagSource;
  /** The storage adapter (`nodeStorage()` from @entity-git/node-fs, the browser's, …). */
  storage: Storage;
  /** Absolute directory holding one repository per session. */
  root: string;
  /** Author and committer of session commits. Default `entity-git <entity-git@localhost>`. */
  identity?: Identity;
  /** Where commit messages look in node metadata (tool name, tokens, pending). */
  metadataKeys?: Partial<MetadataKeys>;
  /** How long to wait for a ref or index lock held by someone else. Default 5000 ms. */
  lockTimeoutMs?: number;
  /** A ref or index lock untouched this long was left by a killed writer and is removed. Default 30 s. */
  staleLockMs?: number;
  /** Page size asked of the DagSource. Default 500. */
  batchSize?: number;
  /**
   * How new repositories lay out `messages/` (DESIGN.md §3): `flat` (the default) puts every
   * message file in `messages/`; `sharded` puts each in `messages/<seq div 1000, 3 digits>/`, so a
   * turn rewrites one small tree instead of one that grows with the session. The layout is
   * recorded in the repository's config (`entitygit.layout`) when it is created, and a
   * repository keeps its own: this option never rewrites an existing history. Readers take
   * either layout from the trees themselves.
   */
  layout?: Layout;
  /**
   * Write a turn's objects as one small pack (`.pack` + `.idx`) instead of a loose file each: two
   * files created instead of about ten, most of a turn's cost on a disk where creating a file is
   * slow. Objects of 64 KB or more stay loose (a pack is built in memory and hashed whole). At most
   * {@link TURN_PACKS_MAX} packs: past that a turn goes loose again, so a repository without a
   * background packer never holds an unbounded number of packs. Default `false`;
   * `createNodeMirror` turns it on (the Node packer merges the small packs in the background).
   */
  packTurns?: boolean;
  /** Where each sync is reported (`mirror.sync`, timed; packages/core/README.md, "Observability"). Default: none. */
  logger?: Logger;
  /**
   * Give the event loop a macrotask turn after this many ms of work in a sync's loops, so a long
   * backfill never stalls the host (default {@link DEFAULT_YIELD_EVERY_MS}; 0: never).
   */
  yieldEveryMs?: number;
}

/** A turn writes its objects as a pack while the repository holds fewer packs than this. */
export const TURN_PACKS_MAX = 32;

/** The two layouts of `messages/`. */
export type Layout = 'flat' | 'sharded';
export const LAYOUTS: readonly Layout[] = Object.freeze(['flat', 'sharded']);

/** The shard directory of a message in the sharded layout: its seq div 1000, 3 digits. */
export const shardOf = (seq: number): string => String(Math.floor(seq / 1000)).padStart(3, '0');

/** A message file's path under `messages/`. */
const messagePath = (layout: Layout, n: { seq: number; name: string }): string =>
  layout === 'sharded' ? `${shardOf(n.seq)}/${n.name}` : n.name;

interface Repo {
  dir: string;
  gitdir: string;
  objects: ObjectStore;
  refs: RefStore;
}

/** Where a sync's new objects go: loose files, or (a backfill) one pack written before any ref moves. */
interface ObjectSink {
  /** `path`: where a tree sits (`messages`, `messages/003`), to be a delta of the last one there. */
  write(type: 'blob' | 'tree' | 'commit', content: Uint8Array, path?: string): Promise<string>;
  writeRaw(raw: Uint8Array, oid: string): Promise<void>;
  /** Objects written so far. */
  readonly count: number;
  /** What `finish()` wrote as a pack (objects in it, the pack file's bytes); none for loose objects. */
  readonly packed: { objects: number; bytes: number };
  finish(): Promise<void>;
}

/** A backfill's message files, already in the working tree: their blob and stat, by path. */
type Prewritten = Map<string, { oid: string; stat: StorageStat }>;
/** A backfill hands its working-tree files to the storage's writer from this many on… */
const PREWRITE_MIN_FILES = 256;
/** …each of at most this size, up to this many bytes in all (the writer is handed a copy). */
const PREWRITE_FILE_MAX = 1 << 20;
const PREWRITE_BYTES_MAX = 64 << 20;

/** A sync this long or longer writes its objects as one pack: a backfill, or a repair. */
const PACKED_BACKFILL_TURNS = 32;
const PACKED_BACKFILL_BYTES = 256 << 20;

/**
 * Loose objects, written together: each write is queued, and the queue is written when it grows
 * large and at `finish()` — blobs and trees at once (concurrent writes overlap their round trips,
 * which on IndexedDB are most of a write's cost), then commits one by one, so an object is never
 * on disk before what it names. A large object is written at once, so a turn never holds more
 * than about {@link QUEUED_BYTES} of queued objects besides it. Nothing queued is written when
 * the sync fails before `finish()`.
 */
function looseSink(objects: ObjectStore): ObjectSink {
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
function turnPackSink(store: Store, repo: Repo): ObjectSink {
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
/** Indexes of at least this many entries are split (see SessionMirror.writeIndex). */
export const SPLIT_MIN = 256;

function packSink(store: Store, repo: Repo): ObjectSink {
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
        const c = parseCommit(content);
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
      const w = await builder.write(repo.gitdir);
      if (w !== null) Object.assign(packed, { objects: w.oids.length, bytes: w.bytes });
      // The pack is in place: its commits go into the commit-graph (replay places a commit on
      // its branch from it). A history that began before this pack has no graph to join: none.
      await writeCommitGraph(store, repo.gitdir, commits);
    },
  };
}

/** A branch's commit per complete turn and the messages of its tip, as they were built. */
interface BranchBuild {
  commits: string[];
  /** Every message file of the tip, in the order the turns added them. */
  entries: TreeEntry[];
  /** Sharded: the same files by shard, and each shard's tree with the entry count it was built at. */
  shards: Map<string, TreeEntry[]>;
  built: Map<string, { count: number; oid: string }>;
  /** Entries already checked for a blob still to write. */
  checked: number;
  /** Flat: the bytes of the last messages tree built, and how many entries it holds. */
  flat: { bytes: Uint8Array; count: number } | null;
}
const newBuild = (): BranchBuild => ({
  commits: [],
  entries: [],
  shards: new Map(),
  built: new Map(),
  checked: 0,
  flat: null,
});

/**
 * What the last sync of a repository derived and built, kept in memory with its state: a turn
 * that only continues one branch is derived and committed from it, in time that does not grow
 * with the session.
 */
interface Plan {
  state: LiveState;
  sessionHead: string | null;
  derivation: Derivation<Known>;
  builds: Map<string, BranchBuild>;
}

export function createMirror(options: MirrorOptions): Mirror {
  return observeMirror(new SessionMirror(options), options.logger);
}

/**
 * Turn N of M for `commit` on the first-parent chain from `tip`, both in the commit-graph: the
 * chain walked by graph position (no object read, no id made but the neighbours'), a commit's turn
 * its generation. Null when either is not in the graph, when the commit is not on the chain, or
 * when the chain's generations do not count its turns one by one (the caller then walks it).
 */
function onChain(
  graph: CommitGraph,
  tip: string,
  commit: string,
): { turn: number; turns: number; prev: string | null; next: string | null } | null {
  const top = graph.positionOf(tip);
  const at = top < 0 ? -1 : graph.positionOf(commit);
  if (at < 0) return null;
  const turns = graph.generation(top);
  const turn = graph.generation(at);
  // A generation drops by one at least per step down: past turns - turn steps, it is not there.
  let p = top;
  let child = -1;
  let steps = 0;
  for (; p !== at; steps++) {
    const q = graph.firstParent(p);
    if (steps >= turns - turn || q === null || q < 0) return null;
    child = p;
    p = q;
  }
  const parent = graph.firstParent(at);
  // By exactly one at every step, down to a root at 1: a linear history, its turns counted.
  if (steps !== turns - turn || parent === null || parent < 0 !== (turn === 1)) return null;
  return { turn, turns, prev: parent >= 0 ? graph.oidAt(parent) : null, next: child >= 0 ? graph.oidAt(child) : null };
}

/** The message files of the head branch at its last complete turn: each one's path and node. */
function headFiles(derivation: Derivation<Known>, layout: Layout): Map<string, Known> {
  const out = new Map<string, Known>();
  const branch = derivation.branches.find((b) => b.name === derivation.head);
  if (branch)
    for (const t of branch.turns.slice(0, branch.complete))
      for (const n of t.nodes) out.set(`messages/${messagePath(layout, n)}`, n);
  return out;
}

/** A file's identity for "is it still the one I wrote": inode, size and modification time. */
function fileId(st: StorageStat): string {
  return `${st.ino}:${st.size}:${st.mtimeNs ?? st.mtimeMs}:${st.ctimeNs ?? st.ctimeMs ?? ''}`;
}
const sameFile = (id: string, st: StorageStat): boolean => id === fileId(st);

const CORE_CONFIG = `[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n`;
const layoutSection = (layout: Layout) => `[entitygit]\n\tlayout = ${layout}\n`;
const repoConfig = (layout: Layout) => withFormat(CORE_CONFIG + layoutSection(layout));

/** The layout a config records (`[entitygit] layout = …`), or null. */
function configuredLayout(text: string | null): Layout | null {
  if (text === null) return null;
  let inSection = false;
  for (const line of text.split('\n')) {
    const section = /^\s*\[([^\]]*)\]/.exec(line);
    if (section) inSection = section[1]!.trim().toLowerCase() === 'entitygit';
    else if (inSection) {
      const m = /^\s*layout\s*=\s*(\S+)\s*$/i.exec(line);
      if (m && (LAYOUTS as string[]).includes(m[1]!)) return m[1] as Layout;
    }
  }
  return null;
}

/** Whether git can read a config file: present, no NUL byte, and a [core] section. */
function configReadable(text: string | null): boolean {
  return text !== null && !text.includes('\0') && /^\s*\[core\]/m.test(text);
}

// meta.json holds the immutable fields only: a commit id never depends on when the row changed.
const metaOf = immutableMeta;

class SessionMirror implements Mirror {
  private readonly dag: DagSource;
  private readonly store: Store;
  private readonly root: string;
  private readonly identity: Identity;
  private readonly keys: MetadataKeys;
  private readonly lock: { timeoutMs: number; staleMs: number };
  private readonly batchSize: number;
  private readonly layout: Layout;
  private readonly packTurns: boolean;
  private readonly states: StateCache;
  /** Per repository: the index entries this mirror last wrote, the file they were written to, and its shared index. */
  private readonly indexes = new Map<
    string,
    { id: string; entries: IndexEntry[]; shared: SharedIndex | null; added: IndexEntry[] }
  >();
  /** Per repository: its commit-graph as last read, and the file it was read from. */
  private readonly graphs = new Map<string, { id: string; graph: CommitGraph | null }>();
  /** Per repository: the plan of the last sync, valid while its state object is the one loaded. */
  private readonly plans = new Map<string, Plan>();
  /** Repositories whose config records today's format. */
  private readonly formats = new Map<string, true>();
  /** Per repository: the layout its config records. */
  private readonly layouts = new Map<string, Layout>();
  /** Per tip: the first-parent chain below it as far as a replay has walked it (tip first). */
  private readonly chains = new Map<
    string,
    { links: { sha: string; parent: string | null; turn: number | null }[]; index: Map<string, number>; done: boolean }
  >();

  private readonly yieldEveryMs: number;

  constructor(o: MirrorOptions) {
    if (typeof o.root !== 'string' || !o.root.startsWith('/')) {
      throw new EntityGitError('INVALID_OPTION', `root must be an absolute path: ${JSON.stringify(o.root)}`);
    }
    this.dag = o.dag;
    this.store = new Store(o.storage);
    this.root = o.root.replace(/\/+$/, '') || '/';
    this.identity = Object.freeze({ ...(o.identity ?? DEFAULT_IDENTITY) });
    assertIdentity(this.identity);
    this.keys = { ...defaultMetadataKeys, ...o.metadataKeys };
    this.lock = { timeoutMs: o.lockTimeoutMs ?? 5000, staleMs: o.staleLockMs ?? 30_000 };
    this.batchSize = o.batchSize ?? 500;
    this.layout = o.layout ?? 'flat';
    if (!LAYOUTS.includes(this.layout))
      throw new EntityGitError(
        'INVALID_OPTION',
        `layout must be one of ${LAYOUTS.join(', ')}: ${JSON.stringify(o.layout)}`,
      );
    this.states = new StateCache(this.store);
    this.packTurns = o.packTurns ?? false;
    this.yieldEveryMs = o.yieldEveryMs ?? DEFAULT_YIELD_EVERY_MS;
    if (!(this.yieldEveryMs >= 0))
      throw new EntityGitError(
        'INVALID_OPTION',
        `yieldEveryMs must be a number >= 0: ${JSON.stringify(o.yieldEveryMs)}`,
      );
  }

  /** Where a live turn's objects go: a pack of its own while the repository has room for one. */
  private async turnSink(repo: Repo): Promise<ObjectSink> {
    if (!this.packTurns) return looseSink(repo.objects);
    return (await countPacks(this.store, repo.gitdir)) < TURN_PACKS_MAX
      ? turnPackSink(this.store, repo)
      : looseSink(repo.objects);
  }

  repoPath(sessionId: string): string {
    assertId(sessionId, 'session id');
    return joinPath(this.root, sessionDirName(sessionId));
  }

  private repo(sessionId: string): Repo {
    const dir = this.repoPath(sessionId);
    const gitdir = joinPath(dir, '.git');
    return {
      dir,
      gitdir,
      objects: new ObjectStore(this.store, gitdir),
      refs: new RefStore(this.store, gitdir, { lockTimeoutMs: this.lock.timeoutMs, staleLockMs: this.lock.staleMs }),
    };
  }

  private async session(sessionId: string): Promise<Session> {
    assertId(sessionId, 'session id');
    const session = await this.dag.getSession(sessionId);
    if (session === null)
      throw new EntityGitError('SESSION_NOT_FOUND', `no session ${JSON.stringify(sessionId)} in the DAG`, {
        sessionId,
      });
    validateSession(session);
    return session;
  }

  async sync(sessionId: string, options: SyncOptions = {}): Promise<SyncResult> {
    const repo = this.repo(sessionId);
    // The key is a path: adapters with files lock that file, others use it as a lock name.
    return this.store.lock(joinPath(repo.gitdir, 'entity-git', 'sync.lock'), async () => {
      // Work a sync started beside its own (a backfill's working-tree files) ends before the lock
      // is let go, also when the sync fails.
      const beside: Promise<unknown>[] = [];
      try {
        return await this.syncLocked(sessionId, repo, options.full === true, beside);
      } finally {
        await Promise.allSettled(beside);
      }
    });
  }

  /** `full`: also put back a config git could not read (repair). */
  private async init(repo: Repo, full = false): Promise<void> {
    if ((await this.store.lstat(joinPath(repo.gitdir, 'HEAD'))) !== null) {
      const config = joinPath(repo.gitdir, 'config');
      const text = await this.store.readText(config);
      if (configReadable(text)) {
        // A repository made elsewhere (restored from a remote, or before layouts were recorded).
        if (configuredLayout(text) === null)
          await this.store.writeAtomic(
            config,
            `${text!.replace(/\n?$/, '\n')}${layoutSection((await this.treeLayout(repo)) ?? this.layout)}`,
          );
      } else if (full) {
        await this.store.writeAtomic(config, repoConfig((await this.treeLayout(repo)) ?? this.layout));
      }
      return;
    }
    // What git needs to call the directory a repository (HEAD, objects/, refs/) and objects/pack,
    // where readers list packs: every other directory (objects/xx, objects/info, refs/heads, logs)
    // is made on first use, as git does. A directory is a 4 KB block: the 256 fan-out directories
    // made up front were 1 MB of a 3-turn session's 1.2 MB (issue 22).
    for (const d of ['objects/pack', 'refs']) await this.store.mkdirp(joinPath(repo.gitdir, d));
    await this.store.writeAtomic(joinPath(repo.gitdir, 'config'), repoConfig(this.layout));
    // HEAD last: its presence is what makes the directory a repository.
    await this.store.writeAtomic(joinPath(repo.gitdir, 'HEAD'), 'ref: refs/heads/main\n');
  }

  /**
   * The repository's format (see `repo-format.ts`). A config without one is given it when the
   * trees show format 2. A format-1 history is refused (`REPO_FORMAT_OLD`) unless `full`: then
   * its tips are backed up and true is returned — the caller rebuilds every branch and records
   * the format last.
   */
  private async checkFormat(repo: Repo, metaOid: string, full: boolean): Promise<boolean> {
    if (!full && this.formats.has(repo.gitdir)) return false;
    const path = joinPath(repo.gitdir, 'config');
    const text = await this.store.readText(path);
    const recorded = configuredFormat(text);
    if (recorded === REPO_FORMAT) {
      // Read once per repository while this mirror lives: a recorded format never changes.
      remember(this.formats, repo.gitdir, true, LIVE_STATES);
      return false;
    }
    if (recorded !== null && recorded > REPO_FORMAT) {
      throw new EntityGitError(
        'REPO_CORRUPT',
        `${repo.gitdir} is in format ${recorded}, written by a newer entity-git (this one writes ${REPO_FORMAT})`,
        { format: recorded },
      );
    }
    const { format, tips } = await formatFromTrees(repo.objects, repo.refs, metaOid);
    if (format === 2) {
      if (text !== null) await this.store.writeAtomic(path, withFormat(text));
      return false;
    }
    if (!full) {
      throw new EntityGitError(
        'REPO_FORMAT_OLD',
        `${repo.dir} was written in format 1 (meta.json held the mutable session row, so its commit ids depend on when the row changed); reconcile (\`entity-git sync\`) or a full sync rebuilds it: the old tips are kept under refs/entity-git/format-1/`,
        { format: 1 },
      );
    }
    await backUpFormat1(repo.refs, tips, this.identity);
    return true;
  }

  /**
   * The layout of an existing repository: what its config records, else what its trees show
   * (a config damaged or not carried over by a clone), else this mirror's option.
   */
  private async repoLayout(repo: Repo): Promise<Layout> {
    // A repository's recorded layout never changes: once read, it is known.
    const known = this.layouts.get(repo.gitdir);
    if (known !== undefined) return known;
    const recorded = configuredLayout(await this.store.readText(joinPath(repo.gitdir, 'config')));
    if (recorded !== null) remember(this.layouts, repo.gitdir, recorded, LIVE_STATES);
    return recorded ?? (await this.treeLayout(repo)) ?? this.layout;
  }

  /** The layout the trees of a repository's branches show; null when no commit says. */
  private async treeLayout(repo: Repo): Promise<Layout | null> {
    let names: string[];
    try {
      names = await repo.refs.branches();
    } catch {
      return null;
    }
    for (const name of names) {
      try {
        const tip = await repo.refs.resolve(`refs/heads/${name}`);
        if (tip === null) continue;
        const root = parseTree(
          await repo.objects.readTyped(parseCommit(await repo.objects.readTyped(tip, 'commit')).tree, 'tree'),
        );
        const messages = root.find((e) => e.name === 'messages');
        if (!messages) continue;
        const first = parseTree(await repo.objects.readTyped(messages.oid, 'tree'))[0];
        if (first) return first.mode === '40000' ? 'sharded' : 'flat';
      } catch {
        // a damaged branch says nothing; another may
      }
    }
    return null;
  }

  /** The message files of a `messages/` tree, by path under it, in either layout. */
  private async messageEntries(repo: Repo, messagesTree: string): Promise<TreeEntry[]> {
    // Shard trees read all at once: each is a chain of deltas read link by link, a read a link.
    const top = parseTree(await repo.objects.readTyped(messagesTree, 'tree'));
    const shards = await Promise.all(
      top.map((e) => (e.mode === '40000' ? repo.objects.readTyped(e.oid, 'tree') : null)),
    );
    const out: TreeEntry[] = [];
    top.forEach((e, k) => {
      const shard = shards[k];
      if (!shard) out.push(e);
      else for (const f of parseTree(shard)) out.push({ ...f, name: `${e.name}/${f.name}` });
    });
    return out;
  }

  private async syncLocked(
    sessionId: string,
    repo: Repo,
    full: boolean,
    beside: Promise<unknown>[],
  ): Promise<SyncResult> {
    // Before any row: a write after this read leaves the marker behind the rows (checked again).
    const marker = (await this.dag.changeMarker?.(sessionId)) ?? null;
    const session = await this.session(sessionId);
    await this.init(repo, full);
    // A repair first removes what native git would trip over; what goes missing is written again below.
    if (full) await scrubRepository(this.store, repo.objects, repo.gitdir);
    const layout = await this.repoLayout(repo);
    const metaBytes = utf8(canonicalJson(metaOf(session)));
    // Set when a full sync rebuilds a format-1 history (its tips are backed up first).
    const converting = await this.checkFormat(repo, repo.objects.hash('blob', metaBytes), full);
    const config = `${layout}|${this.identity.name}|${this.identity.email}`;
    if (full) this.states.forget(repo.gitdir);
    const loaded = full ? null : await this.states.load(repo.gitdir, repo.refs, config);
    const state: LiveState = loaded ?? {
      lastSeq: 0,
      tips: {},
      head: null,
      known: new Map(),
      memo: new Map(),
      records: 0,
    };
    const delta: StateDelta = { nodes: new Set(), deleted: new Set(), memo: [] };
    const known = state.known;
    let from = state.lastSeq;
    // Re-read from the first node that may still change (a placeholder) or that no commit holds
    // yet (its turn was incomplete, so its blob was not written).
    const unsettled =
      state.unsettled ?? new Set([...known.values()].filter((n) => n.pending || !n.stored).map((n) => n.id));
    for (const id of unsettled) {
      const n = known.get(id);
      if (n) from = Math.min(from, n.seq - 1);
    }

    const fresh = new Map<string, Uint8Array>();
    const seen = new Set<string>();
    const plan = this.plans.get(repo.gitdir);
    this.plans.delete(repo.gitdir);
    const seqBefore = state.lastSeq;
    // New nodes in seq order, while every change is a new node newer than all known ones.
    let added: Known[] | null = plan !== undefined && plan.state === loaded ? [] : null;
    let nodesRead = 0;
    const host = new HostYield(this.yieldEveryMs);
    for await (const node of this.dag.nodesAfter(sessionId, from, { batchSize: this.batchSize })) {
      nodesRead++;
      await host.due();
      const { known: k, bytes, changed } = this.ingest(sessionId, node, seen, known, from);
      state.lastSeq = Math.max(state.lastSeq, node.seq);
      if (bytes) fresh.set(k.blob, bytes);
      if (changed) {
        if (added !== null && (known.has(k.id) || k.seq <= seqBefore)) added = null;
        known.set(k.id, k);
        delta.nodes.add(k.id);
        added?.push(k);
      }
    }
    if (from < seqBefore) {
      for (const n of [...known.values()]) {
        if (n.seq > from && !seen.has(n.id)) {
          known.delete(n.id);
          delta.deleted.add(n.id);
          added = null;
        }
      }
    }

    const writtenBefore = repo.objects.written;
    const bytesBefore = repo.objects.writtenBytes;
    // Objects and bytes the sync's packs took (its loose objects are counted by the object store).
    const inPacks = { objects: 0, bytes: 0 };
    let packed = 0;
    // Commits this sync made.
    const created = new Set<string>();
    let derivation: Derivation<Known>;
    let builds: Map<string, BranchBuild>;
    let commitsWritten: number;
    // Set when only the head branch gained whole turns on top of its tip: these nodes.
    let appended: Known[] | null = null;
    // A backfill's message files, written beside its objects.
    let prewritten: Promise<Prewritten> | null = null;
    const extension =
      plan !== undefined && added !== null
        ? added.length === 0 && session.head === plan.sessionHead
          ? 'same'
          : extendDerivation(plan.derivation, added, known, session.head, plan.sessionHead)
        : null;
    if (plan !== undefined && extension === 'same') {
      derivation = plan.derivation;
      builds = plan.builds;
      commitsWritten = 0;
      appended = [];
    } else if (plan !== undefined && extension !== null && extension !== 'same') {
      derivation = extension.derivation;
      builds = plan.builds;
      const build = builds.get(extension.before.name) ?? newBuild();
      builds.set(extension.before.name, build);
      const kept = build.commits.length;
      if (extension.keep < kept) this.trimBuild(build, layout, extension.before, extension.keep);
      const sink = await this.turnSink(repo);
      commitsWritten = await this.commitBranches(
        sessionId,
        repo,
        layout,
        [[extension.after, build]],
        state.memo,
        metaBytes,
        fresh,
        delta.memo,
        sink,
        created,
      );
      await sink.finish();
      inPacks.objects += sink.packed.objects;
      inPacks.bytes += sink.packed.bytes;
      // The index gains the new nodes of whole turns, unless the branch gave up a turn it had.
      if (build.commits.length >= kept) {
        if (extension.after.name !== derivation.head) appended = [];
        else {
          const fresh = new Set(added!.map((n) => n.id));
          const extended =
            extension.keep < kept ? extension.after.turns[extension.keep]!.nodes.filter((n) => fresh.has(n.id)) : [];
          appended = [
            ...extended,
            ...extension.after.turns.slice(kept, extension.after.complete).flatMap((t) => t.nodes),
          ];
        }
      }
      this.markStored([extension.after], Math.min(kept, extension.keep), delta);
    } else {
      derivation = derive([...known.values()], session.head);
      if (loaded === null && !converting)
        await this.seedFromRepository(
          sessionId,
          repo,
          layout,
          derivation,
          state.memo,
          delta.memo,
          repo.objects.hash('blob', metaBytes),
        );
      builds = new Map(derivation.branches.map((b) => [b.name, newBuild()]));
      // A backfill writes one pack, not a file per object; the pack is whole before any ref moves.
      const turns = derivation.branches.reduce((sum, b) => sum + b.complete, 0);
      let freshBytes = 0;
      for (const raw of fresh.values()) freshBytes += raw.length;
      // The pack is built in memory: a history of huge outputs goes loose instead.
      const onePack = loaded === null && turns >= PACKED_BACKFILL_TURNS && freshBytes < PACKED_BACKFILL_BYTES;
      // A short backfill goes where a turn goes (a small pack on Node): two files, not a file
      // and a fan-out directory per object (a 3-turn session's 17 objects were 136 KB of blocks).
      // A repair (full) writes loose, so a damaged loose file is rewritten, not left beside a pack.
      const sink = onePack
        ? packSink(this.store, repo)
        : loaded === null && !full
          ? await this.turnSink(repo)
          : looseSink(repo.objects);
      if (onePack && this.store.workTree) {
        prewritten = this.prewrite(repo, layout, derivation, fresh);
        // Its failure is met where the checkout awaits it (or the sync failed before that).
        prewritten.catch(() => undefined);
        beside.push(prewritten);
      }
      commitsWritten = await this.commitBranches(
        sessionId,
        repo,
        layout,
        derivation.branches.map((b) => [b, builds.get(b.name)!]),
        state.memo,
        metaBytes,
        fresh,
        delta.memo,
        sink,
      );
      await sink.finish();
      inPacks.objects += sink.packed.objects;
      inPacks.bytes += sink.packed.bytes;
      packed = sink.count;
      this.markStored(derivation.branches, 0, delta);
    }
    const tips = new Map<string, { oid: string; turn: number }>();
    for (const b of derivation.branches) {
      const oid = builds.get(b.name)?.commits.at(-1);
      if (oid !== undefined) tips.set(b.name, { oid, turn: b.complete });
    }

    const headBefore = await repo.refs.headBranch().catch((err: unknown) => {
      if (isEntityGitError(err, 'REF_CORRUPT')) return null;
      throw err;
    });
    const branchesMoved: string[] = [];
    for (const [name, { oid, turn }] of tips) {
      const ref = `refs/heads/${name}`;
      let current: string | null | undefined;
      try {
        const raw = await repo.refs.readRaw(ref);
        current = raw !== null && 'oid' in raw ? raw.oid : null;
      } catch (err) {
        if (!isEntityGitError(err, 'REF_CORRUPT')) throw err;
        current = undefined;
      }
      if (current === oid) continue;
      await repo.refs.update(ref, oid, {
        old: current,
        reflog: {
          who: this.identity,
          message: current === null ? `branch: created at turn ${turn}` : `entity-git: turn ${turn}`,
          alsoHead: headBefore === name,
        },
      });
      branchesMoved.push(name);
    }
    let headMoved = false;
    if (derivation.head !== null && headBefore !== derivation.head) {
      await repo.refs.setHead(
        derivation.head,
        this.identity,
        {
          branch: headBefore,
          oid: headBefore ? await repo.refs.resolve(`refs/heads/${headBefore}`).catch(() => null) : null,
        },
        tips.get(derivation.head)?.oid ?? null,
      );
      headMoved = true;
    }
    const metaMoved = await syncMetaRef(repo.objects, repo.refs, session, this.identity, full);
    let worktreeChanged = false;
    if (this.store.workTree) {
      const headTip = derivation.head === null ? undefined : tips.get(derivation.head);
      // Only the head branch's new turns to add, HEAD where it was: the index needs only those.
      const hint =
        appended !== null &&
        !headMoved &&
        headBefore === derivation.head &&
        (appended.length === 0 || branchesMoved.includes(derivation.head ?? ''))
          ? appended
          : null;
      const metaOid = headTip && created.has(headTip.oid) ? repo.objects.hash('blob', metaBytes) : null;
      worktreeChanged = await this.checkout(
        repo,
        layout,
        headTip?.oid ?? null,
        derivation,
        fresh,
        full ? null : hint,
        metaOid,
        prewritten === null ? null : await prewritten,
        full,
      );
    }

    const stillUnsettled = new Set<string>();
    for (const id of [...unsettled, ...delta.nodes]) {
      const n = known.get(id);
      if (n && (n.pending || !n.stored)) stillUnsettled.add(id);
    }
    state.unsettled = stillUnsettled;
    // Last: until every ref holds the new history, the repository still reads as format 1.
    if (converting)
      await this.store.writeAtomic(
        joinPath(repo.gitdir, 'config'),
        withFormat((await this.store.readText(joinPath(repo.gitdir, 'config'))) ?? repoConfig(layout)),
      );
    state.tips = Object.fromEntries([...tips].map(([name, t]) => [name, t.oid]));
    state.head = derivation.head ?? (await repo.refs.headBranch());
    const changed = delta.nodes.size + delta.deleted.size + delta.memo.length > 0 || (state.marker ?? null) !== marker;
    state.marker = marker;
    const noop =
      repo.objects.written === writtenBefore &&
      packed === 0 &&
      branchesMoved.length === 0 &&
      !headMoved &&
      !worktreeChanged &&
      !metaMoved &&
      !converting;
    if (loaded !== null && !changed && branchesMoved.length === 0 && !headMoved)
      this.states.keep(repo.gitdir, state, config);
    else await this.states.save(repo.gitdir, state, loaded === null ? null : delta, config);
    if (derivation.unknownHead === undefined)
      remember(this.plans, repo.gitdir, { state, sessionHead: session.head, derivation, builds }, LIVE_STATES);
    const result: SyncResult = {
      sessionId,
      commitsWritten,
      branchesMoved,
      head: derivation.head,
      nodesRead,
      noop,
      derivation: extension !== null ? 'extended' : 'full',
      objectsWritten: repo.objects.written - writtenBefore + inPacks.objects,
      bytesWritten: repo.objects.writtenBytes - bytesBefore + inPacks.bytes,
    };
    if (derivation.unknownHead !== undefined) result.unknownHead = derivation.unknownHead;
    return result;
  }

  /**
   * Validate a node read from the DAG. `changed`: it is new or differs from what is known;
   * `bytes`: its framed blob (`blob <size>\0<file content>`), unless a commit already holds it.
   */
  private ingest(
    sessionId: string,
    node: DagNode,
    seen: Set<string>,
    known: Map<string, Known>,
    from: number,
  ): { known: Known; bytes: Uint8Array | null; changed: boolean } {
    validateNode(node);
    if (node.session_id !== sessionId) {
      throw new EntityGitError(
        'INVALID_NODE',
        `node ${JSON.stringify(node.id)} belongs to session ${JSON.stringify(node.session_id)}, not ${JSON.stringify(sessionId)}`,
        { nodeId: node.id },
      );
    }
    const prev = known.get(node.id);
    if (seen.has(node.id) || (prev && prev.seq <= from && prev.seq !== node.seq)) {
      throw new EntityGitError('DAG_DUPLICATE_ID', `node id ${JSON.stringify(node.id)} appears twice`, {
        nodeId: node.id,
      });
    }
    seen.add(node.id);
    const bytes = canonicalJsonBytes(node, (size) => `blob ${size}\0`);
    const blob = this.store.codec.sha1(bytes);
    if (prev && prev.blob === blob) return { known: prev, bytes: prev.stored ? null : bytes, changed: false };
    return { known: { ...nodeFacts(node, this.keys), name: messageFileName(node), blob }, bytes, changed: true };
  }

  /**
   * Without a cache, find the commits already in the repository that match the DAG, so they are
   * kept rather than recomputed (nothing is written for them again): walk each branch from its
   * ref (or, when the ref is damaged, from the last value its reflog records), match commit k to
   * turn k by trailers, parents, message and time, and accept the matched prefix only if its last
   * commit has this mirror's identity and meta.json and its messages are exactly the DAG's — so a
   * kept commit is the one this mirror would write, and ids stay a pure function of the DAG.
   */
  private async seedFromRepository(
    sessionId: string,
    repo: Repo,
    layout: Layout,
    derivation: Derivation<Known>,
    memo: Map<string, string>,
    added: string[],
    metaOid: string,
  ): Promise<void> {
    for (const b of derivation.branches) {
      let tip: string | null = null;
      try {
        tip = await repo.refs.resolve(`refs/heads/${b.name}`);
      } catch (err) {
        if (!isEntityGitError(err, 'REF_CORRUPT')) throw err;
        const log = (await this.store.readText(joinPath(repo.gitdir, 'logs', 'refs', 'heads', b.name))) ?? '';
        const last = log.trimEnd().split('\n').at(-1)?.split(' ')[1];
        tip = isOid(last) ? last : null;
      }
      if (tip === null) continue;
      let chain: CommitInfo[];
      try {
        chain = (await this.walk(repo, tip)).reverse();
      } catch (err) {
        if (isEntityGitError(err, 'OBJECT_NOT_FOUND') || isEntityGitError(err, 'OBJECT_CORRUPT')) continue;
        throw err;
      }
      let matched = 0;
      for (; matched < Math.min(chain.length, b.complete); matched++) {
        const c = chain[matched]!;
        const t = b.turns[matched]!;
        const last = t.nodes.reduce((x, y) => (y.seq > x.seq ? y : x));
        const parentOk = matched === 0 ? c.parents.length === 0 : c.parents[0] === chain[matched - 1]!.sha;
        if (!parentOk || c.turn !== t.index || c.node !== last.id || c.seq !== last.seq) break;
        // Kept only as this mirror would write it (message and time; identity and meta.json at the tip, below).
        if (c.time !== turnTime(t.nodes) || c.message !== commitMessage(sessionId, t.index, t.nodes)) break;
      }
      if (matched === 0) continue;
      const expected = new Map<string, string>();
      for (const t of b.turns.slice(0, matched)) for (const n of t.nodes) expected.set(messagePath(layout, n), n.blob);
      try {
        const tipCommit = parseCommit(await repo.objects.readTyped(chain[matched - 1]!.sha, 'commit'));
        const who = `${this.identity.name} <${this.identity.email}> ${tipCommit.time} +0000`;
        if (tipCommit.author !== who || tipCommit.committer !== who) continue;
        const root = parseTree(await repo.objects.readTyped(tipCommit.tree, 'tree'));
        if (root.find((e) => e.name === 'meta.json')?.oid !== metaOid) continue;
        const messages = root.find((e) => e.name === 'messages');
        const actual = messages ? await this.messageEntries(repo, messages.oid) : [];
        if (actual.length !== expected.size || !actual.every((e) => expected.get(e.name) === e.oid)) continue;
        await repo.objects.forEachTyped(
          actual.map((e) => e.oid),
          'blob',
          () => {},
        );
      } catch (err) {
        if (isEntityGitError(err, 'OBJECT_NOT_FOUND') || isEntityGitError(err, 'OBJECT_CORRUPT')) continue;
        throw err;
      }
      let parent: string | null = null;
      for (let k = 0; k < matched; k++) {
        const key = `${parent ?? ''}|${b.turns[k]!.nodes.map((n) => n.blob).join(',')}`;
        memo.set(key, chain[k]!.sha);
        added.push(key);
        parent = chain[k]!.sha;
      }
    }
  }

  /** Mark the nodes of complete turns (from turn index `from` on) as held by a commit. */
  private markStored(branches: readonly BranchPlan<Known>[], from: number, delta: StateDelta): void {
    for (const b of branches) {
      for (let k = from; k < b.complete; k++) {
        for (const n of b.turns[k]!.nodes) {
          if (!n.stored) {
            n.stored = true;
            delta.nodes.add(n.id);
          }
        }
      }
    }
  }

  /** Take a build back to its first `keep` turns (`b` is the plan it was built for). */
  private trimBuild(build: BranchBuild, layout: Layout, b: BranchPlan<Known>, keep: number): void {
    for (let k = build.commits.length - 1; k >= keep; k--) {
      const nodes = b.turns[k]!.nodes;
      for (let i = nodes.length - 1; i >= 0; i--) {
        build.entries.pop();
        if (layout === 'sharded') {
          const shard = shardOf(nodes[i]!.seq);
          const files = build.shards.get(shard)!;
          files.pop();
          if (files.length === 0) build.shards.delete(shard);
          build.built.delete(shard);
        }
      }
    }
    build.commits.length = keep;
    build.checked = Math.min(build.checked, build.entries.length);
    build.flat = null;
  }

  /**
   * Carry each build to the commit of every complete turn of its branch, reusing the memo (turn
   * key → commit). Blobs are written as the first tree that holds them is, so a pending turn
   * leaves nothing dangling. Returns how many commits were made.
   */
  private async commitBranches(
    sessionId: string,
    _repo: Repo,
    layout: Layout,
    work: [BranchPlan<Known>, BranchBuild][],
    memo: Map<string, string>,
    metaBytes: Uint8Array,
    fresh: Map<string, Uint8Array>,
    added: string[],
    sink: ObjectSink,
    created?: Set<string>,
  ): Promise<number> {
    let metaBlob: string | null = null;
    const blobsDone = new Set<string>();
    let commits = 0;
    // Sharded: along one branch a shard only gains entries, so a shard whose entry count is
    // the one its tree was last built with still has that tree.
    const messagesTree = async (build: BranchBuild): Promise<string> => {
      if (layout === 'flat') {
        // The tree one turn earlier plus this turn's entries, when they sort after it (they do:
        // names start with the seq) — not a rebuild of every entry.
        const extended = extendTree(build.flat?.bytes ?? new Uint8Array(0), build.entries, build.flat?.count ?? 0);
        build.flat = extended && { bytes: extended, count: build.entries.length };
        return sink.write('tree', extended ?? buildTree(build.entries), 'messages');
      }
      const dirs: TreeEntry[] = [];
      for (const [shard, files] of build.shards) {
        let tree = build.built.get(shard);
        if (tree === undefined || tree.count !== files.length) {
          tree = { count: files.length, oid: await sink.write('tree', buildTree(files), `messages/${shard}`) };
          build.built.set(shard, tree);
        }
        dirs.push({ mode: '40000', name: shard, oid: tree.oid });
      }
      return sink.write('tree', buildTree(dirs), 'messages');
    };
    const host = new HostYield(this.yieldEveryMs);
    for (const [b, build] of work) {
      let parent: string | null = build.commits.at(-1) ?? null;
      for (let k = build.commits.length; k < b.complete; k++) {
        await host.due();
        const turn = b.turns[k]!;
        for (const n of turn.nodes) {
          const e: TreeEntry = { mode: '100644', name: n.name, oid: n.blob };
          build.entries.push(e);
          if (layout === 'sharded') {
            const shard = shardOf(n.seq);
            const files = build.shards.get(shard);
            if (files) files.push(e);
            else build.shards.set(shard, [e]);
          }
        }
        const key = `${parent ?? ''}|${turn.nodes.map((n) => n.blob).join(',')}`;
        let oid = memo.get(key);
        if (oid === undefined) {
          for (let i = build.checked; i < build.entries.length; i++) {
            const blob = build.entries[i]!.oid;
            const raw = fresh.get(blob);
            if (raw && !blobsDone.has(blob)) {
              await sink.writeRaw(raw, blob);
              blobsDone.add(blob);
            }
          }
          build.checked = build.entries.length;
          metaBlob ??= await sink.write('blob', metaBytes);
          const messages = await messagesTree(build);
          const root = await sink.write(
            'tree',
            buildTree([
              { mode: '100644', name: 'meta.json', oid: metaBlob },
              { mode: '40000', name: 'messages', oid: messages },
            ]),
            '',
          );
          const time = turnTime(turn.nodes);
          oid = await sink.write(
            'commit',
            buildCommit({
              tree: root,
              parents: parent === null ? [] : [parent],
              author: { ...this.identity, time },
              committer: { ...this.identity, time },
              message: commitMessage(sessionId, turn.index, turn.nodes),
            }),
          );
          memo.set(key, oid);
          added.push(key);
          created?.add(oid);
          commits++;
        }
        build.commits.push(oid);
        parent = oid;
      }
    }
    return commits;
  }

  /**
   * Start writing the message files of a backfill's head branch, to run beside the writing of its
   * objects (the storage's {@link Store.writeFiles}); {@link checkout} then takes their stats for
   * the index instead of writing them. Only into a repository without an index (a checkout would
   * write every file anyway), from {@link PREWRITE_MIN_FILES} files, each of at most
   * {@link PREWRITE_FILE_MAX} bytes, up to {@link PREWRITE_BYTES_MAX} in all.
   */
  private async prewrite(
    repo: Repo,
    layout: Layout,
    derivation: Derivation<Known>,
    fresh: Map<string, Uint8Array>,
  ): Promise<Prewritten> {
    if ((await this.store.lstat(joinPath(repo.gitdir, 'index'))) !== null) return new Map();
    const files: { path: string; oid: string; data: Uint8Array }[] = [];
    let bytes = 0;
    for (const [path, n] of headFiles(derivation, layout)) {
      const raw = fresh.get(n.blob);
      const data = raw === undefined ? null : unframe(raw);
      if (data === null || data.length > PREWRITE_FILE_MAX || bytes + data.length > PREWRITE_BYTES_MAX) continue;
      bytes += data.length;
      files.push({ path, oid: n.blob, data });
    }
    if (files.length < PREWRITE_MIN_FILES) return new Map();
    const stats = await this.store.writeFiles(files.map((f) => ({ path: joinPath(repo.dir, f.path), data: f.data })));
    return new Map(files.map((f, i) => [f.path, { oid: f.oid, stat: stats[i]! }]));
  }

  /**
   * Make the working tree and index equal HEAD's tree; true when anything changed. `appended`:
   * HEAD's branch only gained these nodes' files since the index this mirror last wrote (and the
   * meta.json of its new tip), so only they are written — when that index is still the file.
   */
  private async checkout(
    repo: Repo,
    layout: Layout,
    tip: string | null,
    derivation: Derivation<Known>,
    fresh: Map<string, Uint8Array>,
    appended: Known[] | null = null,
    metaOid: string | null = null,
    prewritten: Prewritten | null = null,
    checkFiles = false,
  ): Promise<boolean> {
    if (appended !== null && tip !== null && (await this.appendToIndex(repo, layout, tip, appended, fresh, metaOid)))
      return appended.length > 0;
    const target = new Map<string, string>();
    if (tip !== null) {
      const root = parseTree(
        await repo.objects.readTyped(parseCommit(await repo.objects.readTyped(tip, 'commit')).tree, 'tree'),
      );
      const meta = root.find((e) => e.name === 'meta.json');
      if (meta) target.set('meta.json', meta.oid);
      for (const [path, n] of headFiles(derivation, layout)) target.set(path, n.blob);
    }
    const indexPath = joinPath(repo.gitdir, 'index');
    let current: IndexEntry[] = [];
    let shared: SharedIndex | null = null;
    let rewriteAll = false;
    // The index as this mirror last wrote it, while the file is still that one (anyone else's
    // write — git refreshing stat data, a user's checkout — changes its identity).
    const cached = this.indexes.get(repo.gitdir);
    const st = await this.store.lstat(indexPath);
    const data = cached && st && sameFile(cached.id, st) ? null : await this.store.read(indexPath);
    if (cached && st && data === null) {
      current = cached.entries;
      shared = cached.shared;
    } else if (data !== null) {
      try {
        const read = (await readIndex(this.store, repo.gitdir, data))!;
        current = read.entries;
        shared = read.shared;
      } catch (err) {
        if (!isEntityGitError(err, 'REPO_CORRUPT')) throw err;
        rewriteAll = true;
      }
    }
    this.indexes.delete(repo.gitdir);
    // A repair compares the files themselves (the index trusts them): any damage, every file written again.
    if (checkFiles && worktreeDamaged(await worktreeDamage(this.store, repo.dir, target))) rewriteAll = true;
    const present = st !== null;
    const byPath = new Map(current.map((e) => [e.path, e]));
    let changed = rewriteAll || (!present && target.size > 0);
    const next: IndexEntry[] = [];
    for (const [path, oid] of target) {
      const cur = byPath.get(path);
      if (!rewriteAll && cur !== undefined && cur.oid === oid && cur.mode === 0o100644) {
        next.push(cur);
        continue;
      }
      changed = true;
      const pre = prewritten?.get(path);
      if (pre !== undefined && pre.oid === oid) {
        next.push(entryFromStat(path, oid, pre.stat));
        continue;
      }
      const file = joinPath(repo.dir, path);
      const raw = fresh.get(oid);
      await this.store.writeCreatingParent(file, raw ? unframe(raw) : await repo.objects.readTyped(oid, 'blob'));
      next.push(entryFromStat(path, oid, await this.store.fs.lstat(file)));
    }
    for (const e of current) {
      if (!target.has(e.path)) {
        await this.store.remove(joinPath(repo.dir, e.path));
        changed = true;
      }
    }
    // Without an index to say what the previous HEAD put there (lost, unreadable, or distrusted),
    // the mirror's files HEAD's tree does not have are found in the working tree itself.
    if (!present || rewriteAll) {
      for (const path of await mirrorFiles(this.store, repo.dir, target)) {
        if (!target.has(path)) {
          await this.store.remove(joinPath(repo.dir, path));
          changed = true;
        }
      }
    }
    if (!changed) {
      if (st)
        remember(
          this.indexes,
          repo.gitdir,
          {
            id: fileId(st),
            entries: current,
            shared,
            added: shared === null ? current : current.filter((e) => !shared!.members.has(e)),
          },
          LIVE_STATES,
        );
      return false;
    }
    // Kept in path order, so the next turn's entries only need appending.
    next.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    await this.writeIndex(repo, next, shared);
    return true;
  }

  /** The `appended` case of {@link checkout}; false when it does not apply. */
  private async appendToIndex(
    repo: Repo,
    layout: Layout,
    tip: string,
    appended: Known[],
    fresh: Map<string, Uint8Array>,
    knownMeta: string | null,
  ): Promise<boolean> {
    const indexPath = joinPath(repo.gitdir, 'index');
    const cached = this.indexes.get(repo.gitdir);
    const st = await this.store.lstat(indexPath);
    if (!cached || !st || !sameFile(cached.id, st)) return false;
    if (appended.length === 0) return true;
    const current = cached.entries;
    const at =
      current.length > 0 && current.at(-1)!.path === 'meta.json'
        ? current.length - 1
        : current.findIndex((e) => e.path === 'meta.json');
    if (at < 0) return false;
    const meta = current[at]!;
    const metaOid =
      knownMeta ??
      parseTree(
        await repo.objects.readTyped(parseCommit(await repo.objects.readTyped(tip, 'commit')).tree, 'tree'),
      ).find((e) => e.name === 'meta.json')?.oid;
    if (metaOid === undefined) return false;
    this.indexes.delete(repo.gitdir);
    const next = at === current.length - 1 ? current.slice(0, -1) : current.filter((_, i) => i !== at);
    // The entries the shared index lacks: those it lacked, and the new ones.
    const added = cached.added.filter((e) => e !== meta);
    const before = next.length;
    for (const n of appended) {
      const path = `messages/${messagePath(layout, n)}`;
      const file = joinPath(repo.dir, path);
      const raw = fresh.get(n.blob);
      await this.store.writeCreatingParent(file, raw ? unframe(raw) : await repo.objects.readTyped(n.blob, 'blob'));
      next.push(entryFromStat(path, n.blob, await this.store.fs.lstat(file)));
    }
    let metaEntry = meta;
    if (meta.oid !== metaOid) {
      const file = joinPath(repo.dir, 'meta.json');
      await this.store.writeCreatingParent(file, await repo.objects.readTyped(metaOid, 'blob'));
      metaEntry = entryFromStat('meta.json', metaOid, await this.store.fs.lstat(file));
    }
    added.push(...next.slice(before));
    if (metaEntry !== meta || cached.added.includes(meta)) added.push(metaEntry);
    next.push(metaEntry);
    // Message names begin with their seq: the new files mostly sort after every file there, and
    // before meta.json. Only what was appended is checked.
    for (let i = Math.max(1, before); i < next.length; i++) {
      if (next[i - 1]!.path < next[i]!.path) continue;
      next.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      break;
    }
    await this.writeIndex(repo, next, cached.shared, added);
    return true;
  }

  /**
   * Replace the index under `index.lock`, and remember what it holds. From {@link SPLIT_MIN}
   * entries on, the index is split (git's split index): the entries of `shared`, the shared
   * index the current one names, stay in that file, and the index holds only the entries added
   * since — so a turn writes a few entries, not the whole session. A new shared index, holding
   * every entry, is written once those added entries pass an eighth of it (or one of its entries
   * changed). Shared indexes other than the new one and the one it replaces are removed.
   */
  private async writeIndex(
    repo: Repo,
    entries: IndexEntry[],
    shared: SharedIndex | null,
    knownAdded?: IndexEntry[],
  ): Promise<void> {
    const indexPath = joinPath(repo.gitdir, 'index');
    const lock = `${indexPath}.lock`;
    const codec = this.store.codec;
    let bytes: Uint8Array;
    let now: SharedIndex | null = null;
    let written: string | null = null;
    let outside = entries;
    if (entries.length < SPLIT_MIN) bytes = buildIndex(entries, codec);
    else {
      // `knownAdded`, from a caller that knows which entries are new, spares a pass over them all.
      const added = shared && (knownAdded ?? entries.filter((e) => !shared.members.has(e)));
      if (
        shared &&
        added &&
        added.length + shared.members.size === entries.length &&
        added.length <= shared.members.size / 8
      ) {
        now = shared;
        outside = added;
      } else {
        const whole = buildIndex(entries, codec);
        written = toHex(whole.subarray(whole.length - 20));
        await this.store.writeAtomic(joinPath(repo.gitdir, `sharedindex.${written}`), whole);
        now = { oid: written, members: new Set(entries) };
        outside = [];
      }
      bytes = buildSplitIndex(outside, now.oid, codec);
    }
    await acquireLockFile(this.store, lock, bytes, this.lock);
    try {
      await this.store.fs.rename(lock, indexPath);
    } catch (err) {
      await this.store.remove(lock);
      throw this.store.wrap(err, 'write index', indexPath);
    }
    const st = await this.store.lstat(indexPath);
    if (st) remember(this.indexes, repo.gitdir, { id: fileId(st), entries, shared: now, added: outside }, LIVE_STATES);
    if (written !== null || (now === null && shared !== null)) {
      const keep = new Set([`sharedindex.${now?.oid}`, `sharedindex.${shared?.oid}`]);
      for (const name of await this.store.readdir(repo.gitdir)) {
        if (name.startsWith('sharedindex.') && !keep.has(name)) await this.store.remove(joinPath(repo.gitdir, name));
      }
    }
  }

  async log(sessionId: string, options: { branch?: string } = {}): Promise<CommitInfo[]> {
    const repo = await this.openExisting(sessionId);
    const branch = options.branch ?? (await repo.refs.headBranch());
    if (branch === null) return [];
    const tip = await repo.refs.resolve(`refs/heads/${branch}`);
    if (tip === null) {
      if (options.branch !== undefined)
        throw new EntityGitError(
          'BRANCH_NOT_FOUND',
          `session ${JSON.stringify(sessionId)} has no branch ${JSON.stringify(branch)}`,
          { sessionId, branch },
        );
      return [];
    }
    return this.walk(repo, tip);
  }

  private async walk(repo: Repo, tip: string): Promise<CommitInfo[]> {
    const out: CommitInfo[] = [];
    const seen = new Set<string>();
    for (let sha: string | undefined = tip; sha !== undefined && !seen.has(sha); ) {
      seen.add(sha);
      const c = parseCommit(await repo.objects.readTyped(sha, 'commit'));
      const t = parseTrailers(c.message);
      out.push({
        sha,
        parents: c.parents,
        time: c.time,
        subject: c.message.split('\n', 1)[0]!,
        message: c.message,
        turn: t?.turn ?? null,
        node: t?.node ?? null,
        seq: t?.seq ?? null,
      });
      sha = c.parents[0];
    }
    return out;
  }

  private async openExisting(sessionId: string): Promise<Repo> {
    const repo = this.repo(sessionId);
    if ((await this.store.lstat(joinPath(repo.gitdir, 'HEAD'))) === null) {
      throw new EntityGitError(
        'SESSION_NOT_FOUND',
        `session ${JSON.stringify(sessionId)} has no repository under ${this.root}`,
        { sessionId },
      );
    }
    return repo;
  }

  async branches(sessionId: string): Promise<BranchInfo[]> {
    const repo = await this.openExisting(sessionId);
    const head = await repo.refs.headBranch();
    const out: BranchInfo[] = [];
    for (const name of await repo.refs.branches()) {
      const commit = await repo.refs.resolve(`refs/heads/${name}`);
      if (commit === null) continue;
      const c = parseCommit(await repo.objects.readTyped(commit, 'commit'));
      out.push({ name, commit, turns: parseTrailers(c.message)?.turn ?? 0, head: name === head });
    }
    return out.sort((a, b) =>
      a.name === 'main' ? -1 : b.name === 'main' ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
  }

  async read(sessionId: string, commit: string, options: { branch?: string } = {}): Promise<TurnView> {
    if (!isOid(commit))
      throw new EntityGitError('COMMIT_NOT_FOUND', `not a commit id (40 hex digits): ${JSON.stringify(commit)}`, {
        commit,
      });
    const repo = await this.openExisting(sessionId);
    const branches = await this.branches(sessionId);
    const order =
      options.branch !== undefined
        ? branches.filter((b) => b.name === options.branch)
        : [...branches.filter((b) => b.head), ...branches.filter((b) => !b.head)];
    if (options.branch !== undefined && order.length === 0)
      throw new EntityGitError(
        'BRANCH_NOT_FOUND',
        `session ${JSON.stringify(sessionId)} has no branch ${JSON.stringify(options.branch)}`,
        { sessionId, branch: options.branch },
      );
    for (const b of order) {
      const found = await this.position(repo, b.commit, commit);
      if (found === null) continue;
      const root = parseTree(
        await repo.objects.readTyped(parseCommit(await repo.objects.readTyped(commit, 'commit')).tree, 'tree'),
      );
      let messages: DagNode[] = [];
      const messagesTree = root.find((e) => e.name === 'messages');
      if (messagesTree) {
        const entries = await this.messageEntries(repo, messagesTree.oid);
        messages = new Array<DagNode>(entries.length);
        await repo.objects.forEachTyped(
          entries.map((e) => e.oid),
          'blob',
          (i, bytes) => {
            messages[i] = JSON.parse(fromUtf8(bytes)) as DagNode;
          },
        );
      }
      messages.sort((x, y) => x.seq - y.seq);
      const metaEntry = root.find((e) => e.name === 'meta.json');
      const meta = metaEntry
        ? (JSON.parse(fromUtf8(await repo.objects.readTyped(metaEntry.oid, 'blob'))) as JsonValue)
        : null;
      return { sessionId, commit, branch: b.name, ...found, messages, meta };
    }
    throw new EntityGitError(
      'COMMIT_NOT_FOUND',
      `commit ${commit} is on no branch of session ${JSON.stringify(sessionId)}`,
      { sessionId, commit },
    );
  }

  /**
   * Where `commit` sits on the first-parent chain from `tip`: turn N of M, and its neighbours.
   * Walks from the tip down to the commit only, when the trailers agree with the walk (they do in
   * every repository the mirror wrote); else walks the whole chain. Null when it is not there.
   */
  private async position(
    repo: Repo,
    tip: string,
    commit: string,
  ): Promise<{ turn: number; turns: number; prev: string | null; next: string | null } | null> {
    // The chain below a tip never changes: what one read walked, the next one starts from.
    const key = `${repo.gitdir}\0${tip}`;
    let walked = this.chains.get(key);
    if (walked === undefined) walked = { links: [], index: new Map(), done: false };
    remember(this.chains, key, walked, LIVE_STATES);
    const { links, index } = walked;
    const graph = walked.done || index.has(commit) ? null : await this.commitGraph(repo);
    const direct = graph === null ? null : onChain(graph, tip, commit);
    if (direct !== null) return direct;
    while (!index.has(commit) && !walked.done) {
      const sha = links.length === 0 ? tip : links.at(-1)!.parent;
      if (sha === null || index.has(sha)) {
        walked.done = true;
        break;
      }
      // In the commit-graph, the rest of the chain is read from it, not from each commit object:
      // positions, first parents and generations (a commit's turn, on the mirror's linear history).
      const before = links.length;
      for (let p = graph?.positionOf(sha) ?? -1, oid = sha; graph && p >= 0; ) {
        const parent = graph.firstParent(p);
        if (parent === null) break; // an octopus merge: read from its object below
        const parentOid = parent >= 0 ? graph.oidAt(parent) : null;
        index.set(oid, links.length);
        links.push({ sha: oid, parent: parentOid, turn: graph.generation(p) });
        if (parentOid === null || index.has(parentOid)) break;
        oid = parentOid;
        p = parent;
      }
      if (links.length > before) continue;
      const c = parseCommit(await repo.objects.readTyped(sha, 'commit'));
      index.set(sha, links.length);
      links.push({ sha, parent: c.parents[0] ?? null, turn: parseTrailers(c.message)?.turn ?? null });
    }
    const at = index.get(commit);
    if (at === undefined) return null;
    const link = links[at]!;
    const tipTurn = links[0]!.turn;
    // Turn N of M from the trailers when they agree with the chain (they do in every repository
    // the mirror wrote); else counted along the whole chain.
    if (
      tipTurn !== null &&
      link.turn !== null &&
      tipTurn - link.turn === at &&
      (link.parent === null) === (link.turn === 1)
    ) {
      return { turn: link.turn, turns: tipTurn, prev: link.parent, next: at > 0 ? links[at - 1]!.sha : null };
    }
    const chain = (await this.walk(repo, tip)).reverse();
    const i = chain.findIndex((x) => x.sha === commit);
    return {
      turn: chain[i]!.turn ?? i + 1,
      turns: chain.length,
      prev: i > 0 ? chain[i - 1]!.sha : null,
      next: i + 1 < chain.length ? chain[i + 1]!.sha : null,
    };
  }

  /** The repository's commit-graph, read once while the file stays the same; null when there is none this reader takes. */
  private async commitGraph(repo: Repo): Promise<CommitGraph | null> {
    const path = joinPath(repo.gitdir, COMMIT_GRAPH_PATH);
    const st = await this.store.lstat(path);
    if (st === null) return null;
    const cached = this.graphs.get(repo.gitdir);
    if (cached && sameFile(cached.id, st)) return cached.graph;
    const data = await this.store.read(path);
    const graph = data === null ? null : CommitGraph.parse(data, this.store.codec);
    remember(this.graphs, repo.gitdir, { id: fileId(st), graph }, LIVE_STATES);
    return graph;
  }

  async verify(sessionId: string, options: VerifyOptions = {}): Promise<VerifyReport> {
    const repo = this.repo(sessionId);
    // A config git cannot read is a difference the refs do not show: checked on the fast path too.
    const gitConfig = options.quick === true ? await this.store.readText(joinPath(repo.gitdir, 'config')) : null;
    // The state must have been recorded under this mirror's config (layout, identity): another's ids differ.
    const stateConfig = () =>
      `${configuredLayout(gitConfig) ?? this.layout}|${this.identity.name}|${this.identity.email}`;
    if (
      options.quick === true &&
      configReadable(gitConfig) &&
      (await unchangedSinceSync(
        this.dag,
        this.states,
        repo,
        sessionId,
        this.store.workTree === true ? this.store : null,
        stateConfig(),
      ))
    ) {
      return { sessionId, ok: true, differences: [], unchanged: true };
    }
    const session = await this.session(sessionId);
    if ((await this.store.lstat(joinPath(repo.gitdir, 'HEAD'))) === null) {
      return { sessionId, ok: false, differences: [{ kind: 'missing-repo', detail: `no repository at ${repo.dir}` }] };
    }
    // Under the sync lock: a sync half done by another caller is not a difference.
    return this.store.lock(joinPath(repo.gitdir, 'entity-git', 'sync.lock'), () =>
      this.verifyLocked(sessionId, session, repo),
    );
  }

  private async verifyLocked(sessionId: string, session: Session, repo: Repo): Promise<VerifyReport> {
    const differences: Difference[] = [];
    const report = (): VerifyReport => ({
      sessionId,
      ok: differences.every((d) => d.kind === 'extra-branch'),
      differences,
    });
    const known: Known[] = [];
    try {
      const seen = new Set<string>();
      const none = new Map<string, Known>();
      for await (const node of this.dag.nodesAfter(sessionId, 0, { batchSize: this.batchSize }))
        known.push(this.ingest(sessionId, node, seen, none, 0).known);
    } catch (err) {
      if (!(err instanceof EntityGitError)) throw err;
      differences.push({ kind: 'dag-error', detail: err.message });
      return report();
    }
    let derivation: Derivation<Known>;
    try {
      derivation = derive(known, session.head);
    } catch (err) {
      if (!(err instanceof EntityGitError)) throw err;
      differences.push({ kind: 'dag-error', detail: err.message });
      return report();
    }
    const layout = await this.repoLayout(repo);
    const expectedNames = new Set<string>();
    for (const b of derivation.branches) {
      if (b.complete === 0) continue;
      expectedNames.add(b.name);
      await this.verifyBranch(repo, layout, b, differences);
    }
    let actualBranches: string[] = [];
    try {
      actualBranches = await repo.refs.branches();
    } catch (err) {
      differences.push({ kind: 'corrupt', detail: (err as Error).message });
    }
    for (const name of actualBranches) {
      if (!expectedNames.has(name))
        differences.push({
          kind: 'extra-branch',
          branch: name,
          detail: `branch ${name} is not derived from the DAG (kept: refs are never deleted)`,
        });
    }
    if (!configReadable(await this.store.readText(joinPath(repo.gitdir, 'config')))) {
      differences.push({ kind: 'corrupt', detail: `${repo.gitdir}/config is missing or unreadable by git` });
    }
    differences.push(...damageDifferences(await inspectRepository(this.store, repo.gitdir)));
    let head: string | null = null;
    try {
      head = await repo.refs.headBranch();
    } catch (err) {
      differences.push({ kind: 'corrupt', detail: (err as Error).message });
    }
    if (this.store.workTree && head !== null && head === derivation.head) {
      const expected = new Map([...headFiles(derivation, layout)].map(([path, n]) => [path, n.blob]));
      let entries: IndexEntry[] = [];
      try {
        entries = (await readIndex(this.store, repo.gitdir))?.entries ?? [];
      } catch {
        entries = [];
      }
      const indexed = entries.filter((e) => e.path !== 'meta.json');
      const same =
        indexed.length === expected.size &&
        indexed.every((e) => expected.get(e.path) === e.oid) &&
        (expected.size === 0 || entries.some((e) => e.path === 'meta.json'));
      if (!same)
        differences.push({
          kind: 'worktree-differs',
          branch: head,
          detail: `the index of ${repo.dir} does not hold the files of ${head}`,
        });
      // The files themselves: `git status` clean is the promise, not only the index.
      try {
        const tip = await repo.refs.resolve(`refs/heads/${head}`);
        const meta =
          tip === null
            ? undefined
            : parseTree(
                await repo.objects.readTyped(parseCommit(await repo.objects.readTyped(tip, 'commit')).tree, 'tree'),
              ).find((e) => e.name === 'meta.json');
        const target = new Map(expected);
        if (meta) target.set('meta.json', meta.oid);
        differences.push(...worktreeDifferences(await worktreeDamage(this.store, repo.dir, target), head, repo.dir));
      } catch {
        // a damaged tip is reported by verifyBranch already
      }
    }
    if (derivation.head !== null && head !== derivation.head && expectedNames.has(derivation.head)) {
      differences.push({
        kind: 'head-differs',
        expected: derivation.head,
        actual: head,
        detail: `HEAD names ${head ?? 'nothing'}, the DAG head is on ${derivation.head}`,
      });
    }
    // The ids themselves, once all else agrees: those a fresh backfill of this DAG writes.
    if (differences.every((d) => d.kind === 'extra-branch'))
      await this.verifyIds(sessionId, layout, expectedNames, repo, differences);
    await verifyFormatAndMeta(
      this.store,
      repo,
      session,
      this.identity,
      repo.objects.hash('blob', utf8(canonicalJson(metaOf(session)))),
      differences,
    );
    return report();
  }

  /**
   * Compare each branch's tip with the commit a fresh backfill of the DAG writes, built in memory
   * by a mirror of this one's config: a repository can hold the right messages under other ids
   * (written by another config, or a format-1 history) and would then diverge from every other
   * mirror of the DAG.
   */
  private async verifyIds(
    sessionId: string,
    layout: Layout,
    names: Set<string>,
    repo: Repo,
    differences: Difference[],
  ): Promise<void> {
    const fresh = new SessionMirror({
      dag: this.dag,
      storage: memoryStorage(),
      root: '/expected',
      identity: this.identity,
      metadataKeys: this.keys,
      layout,
      batchSize: this.batchSize,
    });
    await fresh.sync(sessionId);
    const expected = new Map((await fresh.branches(sessionId)).map((b) => [b.name, b.commit]));
    for (const name of [...names].sort()) {
      const want = expected.get(name);
      const actual = await repo.refs.resolve(`refs/heads/${name}`).catch(() => null);
      if (want !== undefined && actual !== want) {
        differences.push({
          kind: 'ids-differ',
          branch: name,
          expected: want,
          actual,
          detail: `branch ${name} holds the DAG's turns under other commit ids than a fresh backfill writes (${want.slice(0, 10)})`,
        });
      }
    }
  }

  /** Compare one derived branch with the repository by trailers and message blobs. */
  private async verifyBranch(
    repo: Repo,
    layout: Layout,
    b: BranchPlan<Known>,
    differences: Difference[],
  ): Promise<void> {
    let tip: string | null;
    try {
      tip = await repo.refs.resolve(`refs/heads/${b.name}`);
    } catch (err) {
      differences.push({ kind: 'corrupt', branch: b.name, detail: (err as Error).message });
      return;
    }
    if (tip === null) {
      differences.push({
        kind: 'missing-branch',
        branch: b.name,
        detail: `branch ${b.name} (${b.complete} turns) is missing`,
      });
      return;
    }
    let chain: CommitInfo[];
    try {
      chain = (await this.walk(repo, tip)).reverse();
    } catch (err) {
      differences.push({
        kind: isEntityGitError(err, 'OBJECT_NOT_FOUND') ? 'missing-object' : 'corrupt',
        branch: b.name,
        detail: (err as Error).message,
      });
      return;
    }
    const expectTurns = b.turns.slice(0, b.complete);
    for (let k = 0; k < Math.max(chain.length, expectTurns.length); k++) {
      const c = chain[k];
      const t = expectTurns[k];
      const last = t?.nodes.reduce((x, y) => (y.seq > x.seq ? y : x));
      if (!c || !t || !last || c.turn !== t.index || c.node !== last.id || c.seq !== last.seq) {
        differences.push({
          kind: 'branch-differs',
          branch: b.name,
          expected: last ? `turn ${t!.index} ending at ${last.id}` : null,
          actual: c ? `turn ${c.turn} ending at ${c.node}` : null,
          detail: `branch ${b.name} differs from the DAG at turn ${k + 1} (${chain.length} commits, ${expectTurns.length} turns expected)`,
        });
        return;
      }
    }
    const expected = new Map<string, string>();
    for (const t of expectTurns) for (const n of t.nodes) expected.set(messagePath(layout, n), n.blob);
    try {
      const root = parseTree(
        await repo.objects.readTyped(parseCommit(await repo.objects.readTyped(tip, 'commit')).tree, 'tree'),
      );
      const messages = root.find((e) => e.name === 'messages');
      const actual = messages ? await this.messageEntries(repo, messages.oid) : [];
      const same = actual.length === expected.size && actual.every((e) => expected.get(e.name) === e.oid);
      if (!same) {
        differences.push({
          kind: 'branch-differs',
          branch: b.name,
          detail: `the messages at the tip of ${b.name} differ from the DAG's nodes`,
        });
        return;
      }
      for (const e of actual) {
        if (!(await repo.objects.has(e.oid)))
          differences.push({
            kind: 'missing-object',
            branch: b.name,
            actual: e.oid,
            detail: `blob ${e.oid} (${e.name}) is missing`,
          });
      }
    } catch (err) {
      differences.push({
        kind: isEntityGitError(err, 'OBJECT_NOT_FOUND') ? 'missing-object' : 'corrupt',
        branch: b.name,
        detail: (err as Error).message,
      });
    }
  }
}
