import type { NodeFacts } from '../model/commit-message.js';
import type { RefStore } from '../git/refs.js';
import { isEntityGitError } from '../errors.js';
import { joinPath, type Store } from '../storage/store.js';

/** A node as the mirror keeps it between syncs: its facts, file name and blob id. */
export interface Known extends NodeFacts {
  name: string;
  blob: string;
  /** Set once a commit holds the node (its blob is in the repository). */
  stored?: true;
}

/**
 * What the mirror remembers of a repository between syncs. Kept in memory per repository and
 * on disk as a small header (`state.json`) plus an append-only log of records (`state.jsonl`),
 * so a turn appends a few lines instead of rewriting every node. The log is cut into segments:
 * once the live one passes {@link SEGMENT_BYTES} it is sealed (`state.<k>.jsonl`) and a new one
 * begins, so an append never rewrites more than a segment where appending means rewriting
 * (IndexedDB). Only a cache: it is checked against the refs before use and rebuilt from the DAG
 * whenever it disagrees or is damaged.
 */
export interface LiveState {
  lastSeq: number;
  tips: Record<string, string>;
  head: string | null;
  known: Map<string, Known>;
  /** Turn key (parent + the turn's blobs) → commit id. */
  memo: Map<string, string>;
  /** Records in the log file, to decide when to compact it. */
  records: number;
  /** In memory only: the nodes still pending or held by no commit (found by a scan when absent). */
  unsettled?: Set<string>;
  /** Bytes of each sealed segment of the log, oldest first. */
  sealed?: number[];
}

/** What changed during a sync, to append to the log. */
export interface StateDelta {
  nodes: Set<string>;
  deleted: Set<string>;
  memo: string[];
}

interface Header {
  v: 2;
  config: string;
  lastSeq: number;
  tips: Record<string, string>;
  head: string | null;
  /** Bytes of the live segment (`state.jsonl`) that hold records. */
  bytes: number;
  /** Bytes of each sealed segment, `state.0.jsonl` first (absent: none). */
  sealed?: number[];
  records: number;
  nodes: number;
  memo: number;
}

type Record_ = { n: Known } | { d: string } | { c: [string, string] };

const HEADER = 'entity-git/state.json';
const LOG = 'entity-git/state.jsonl';
const sealedLog = (k: number) => `entity-git/state.${k}.jsonl`;
/** The live segment of the log is sealed once it holds this many bytes. */
export const SEGMENT_BYTES = 64 << 10;

/** Repositories whose state stays in memory: the most recently synced (a server has thousands). */
export const LIVE_STATES = 64;

/** Put `key` last in a Map used as an LRU, dropping the oldest entries beyond `max`. */
export function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > max) map.delete(map.keys().next().value as K);
}

export class StateCache {
  /** In memory: the state and the config (layout, identity) it was computed under. */
  private readonly live = new Map<string, { state: LiveState; config: string }>();

  constructor(private readonly store: Store) {}

  /**
   * The state of `gitdir` if it still describes the repository, else null. The returned object
   * is the caller's to change: the cache forgets it until {@link save}, so a failed sync leaves
   * nothing half-changed behind.
   */
  async load(gitdir: string, refs: RefStore, config: string): Promise<LiveState | null> {
    const cached = this.live.get(gitdir);
    this.live.delete(gitdir);
    if (cached && cached.config === config && (await this.matches(cached.state, refs))) return cached.state;
    // Another process may have synced since: its state on disk is the one to check.
    const disk = await this.read(gitdir, config);
    return disk && (await this.matches(disk, refs)) ? disk : null;
  }

  private async matches(state: LiveState, refs: RefStore): Promise<boolean> {
    try {
      for (const [branch, tip] of Object.entries(state.tips)) if ((await refs.resolve(`refs/heads/${branch}`)) !== tip) return false;
      return state.head === null || (await refs.headBranch()) === state.head;
    } catch (err) {
      if (isEntityGitError(err, 'REF_CORRUPT')) return false;
      throw err;
    }
  }

  private async read(gitdir: string, config: string): Promise<LiveState | null> {
    const text = await this.store.readText(joinPath(gitdir, HEADER));
    if (text === null) return null;
    let header: Header;
    try {
      header = JSON.parse(text) as Header;
    } catch {
      return null;
    }
    if (header.v !== 2 || header.config !== config) return null;
    const sealed = Array.isArray(header.sealed) ? header.sealed : [];
    const segments: { path: string; bytes: number }[] = [
      ...sealed.map((bytes, k) => ({ path: sealedLog(k), bytes })),
      { path: LOG, bytes: header.bytes },
    ];
    const known = new Map<string, Known>();
    const memo = new Map<string, string>();
    let records = 0;
    const decoder = new TextDecoder();
    for (const segment of segments) {
      const log = await this.store.read(joinPath(gitdir, segment.path));
      if (typeof segment.bytes !== 'number' || log === null || log.length < segment.bytes) return null;
      for (const line of decoder.decode(log.subarray(0, segment.bytes)).split('\n')) {
        if (line === '') continue;
        let r: Record_;
        try {
          r = JSON.parse(line) as Record_;
        } catch {
          continue; // the torn tail of a crashed append: the next append started a new line
        }
        records++;
        if ('n' in r) known.set(r.n.id, r.n);
        else if ('d' in r) known.delete(r.d);
        else memo.set(r.c[0], r.c[1]);
      }
    }
    if (known.size !== header.nodes || memo.size !== header.memo) return null;
    return { lastSeq: header.lastSeq, tips: header.tips, head: header.head, known, memo, records, sealed };
  }

  /** Persist `state` (appending `delta`, or rewriting the log when `delta` is null or it grew). */
  async save(gitdir: string, state: LiveState, delta: StateDelta | null, config: string): Promise<void> {
    const logPath = joinPath(gitdir, LOG);
    const live = state.known.size + state.memo.size;
    let bytes: number;
    const sealedBefore = state.sealed ?? [];
    if (delta === null || state.records > 2 * live + 1000) {
      const lines: string[] = [];
      for (const n of state.known.values()) lines.push(JSON.stringify({ n }));
      for (const c of state.memo) lines.push(JSON.stringify({ c }));
      const text = lines.length ? `${lines.join('\n')}\n` : '';
      await this.store.writeAtomic(logPath, text);
      bytes = new TextEncoder().encode(text).length;
      state.records = lines.length;
      state.sealed = [];
    } else {
      const lines: string[] = [];
      for (const id of delta.nodes) {
        const n = state.known.get(id);
        if (n) lines.push(JSON.stringify({ n }));
      }
      for (const id of delta.deleted) lines.push(JSON.stringify({ d: id }));
      for (const key of delta.memo) lines.push(JSON.stringify({ c: [key, state.memo.get(key)] }));
      if (lines.length > 0) {
        // Leading newline: ends a line torn by a crash, so it cannot swallow these records.
        await this.store.append(logPath, `\n${lines.join('\n')}\n`);
        state.records += lines.length;
      }
      const st = await this.store.lstat(logPath);
      bytes = st?.size ?? 0;
      if (bytes >= SEGMENT_BYTES) {
        // Sealed: the next append starts a new live segment. A crash before the header names
        // it leaves a header whose live segment is gone: not trusted, rebuilt from the DAG.
        const sealed = [...sealedBefore, bytes];
        const to = joinPath(gitdir, sealedLog(sealed.length - 1));
        try {
          await this.store.fs.rename(logPath, to);
        } catch (err) {
          throw this.store.wrap(err, 'rename', to);
        }
        state.sealed = sealed;
        bytes = 0;
      }
    }
    const header: Header = {
      v: 2, config, lastSeq: state.lastSeq, tips: state.tips, head: state.head,
      bytes, records: state.records, nodes: state.known.size, memo: state.memo.size,
    };
    if (state.sealed && state.sealed.length > 0) header.sealed = state.sealed;
    await this.store.writeAtomic(joinPath(gitdir, HEADER), JSON.stringify(header));
    // A rewrite leaves sealed segments behind only until the header no longer names them (also
    // those of a state that was not trusted, whose segments this one never knew).
    if (state.sealed?.length === 0) {
      const dir = joinPath(gitdir, 'entity-git');
      for (const name of await this.store.readdir(dir)) if (/^state\.\d+\.jsonl$/.test(name)) await this.store.remove(joinPath(dir, name));
    }
    remember(this.live, gitdir, { state, config }, LIVE_STATES);
  }

  /** Keep `state` in memory without writing (a sync that changed nothing the disk copy lacks). */
  keep(gitdir: string, state: LiveState, config: string): void {
    remember(this.live, gitdir, { state, config }, LIVE_STATES);
  }

  forget(gitdir: string): void {
    this.live.delete(gitdir);
  }
}
