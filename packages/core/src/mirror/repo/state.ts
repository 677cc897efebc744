import { type RefStore, isEntityGitError, joinPath, type Store } from '@entity-git/git';
import type { HostYield } from '../host-yield.js';
import { type Known, type KnownRecord, packKnown, unpackKnown } from './known-record.js';
import { repoFile } from './files.js';

export type { Known } from './known-record.js';

/**
 * What the mirror remembers of a repository between syncs. Kept in memory per repository and
 * on disk as an append-only log of records (`state.jsonl`) and a small header (`state.json`:
 * the config and the sealed segments), so a turn appends a few lines and writes nothing else.
 * Each append ends with a summary record (tips, head, last seq, counts): the log holds what
 * precedes its last whole summary, so a torn append is not read. The log is cut into segments:
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
  /** The DAG's change marker read before the last sync's rows (null: the source keeps none). */
  marker?: string | null;
}

/** The records of a segment's lines; a line a crash tore does not parse and is left out. */
function parseLines(text: string, into: Record_[]): void {
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      into.push(JSON.parse(line) as Record_);
    } catch {
      // the torn tail of a crashed append: the next append started a new line
    }
  }
}

/** What changed during a sync, to append to the log. */
export interface StateDelta {
  nodes: Set<string>;
  deleted: Set<string>;
  memo: string[];
}

/** Rewritten only when the log is rewritten or a segment is sealed, not every turn. */
interface Header {
  v: 3;
  config: string;
  /** Bytes of each sealed segment, `state.0.jsonl` first (absent: none). */
  sealed?: number[];
}

/** The last record of every append: the state the records before it add up to. */
interface Summary {
  lastSeq: number;
  tips: Record<string, string>;
  head: string | null;
  nodes: number;
  memo: number;
  /** The change marker the sync read before the DAG's rows (absent: none). */
  m?: string;
}

/** `k`: a node (`known-record.ts`); `d`: a node gone; `c`: a memo entry; `h`: the summary. Anything else: the log is rebuilt. */
type Record_ = { k: KnownRecord } | { d: string } | { c: [string, string] } | { h: Summary };

/**
 * Where the state lives: `.git/entity-git-state.json`, `.git/entity-git-state.jsonl` and the
 * sealed `.git/entity-git-state.<k>.jsonl` (see {@link repoFile}).
 */
interface StatePaths {
  header: string;
  log: string;
  sealed(k: number): string;
}
const statePaths = (gitdir: string): StatePaths => ({
  header: repoFile(gitdir, 'state.json'),
  log: repoFile(gitdir, 'state.jsonl'),
  sealed: (k) => repoFile(gitdir, `state.${k}.jsonl`),
});
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

/** The summary record that ends the log: tips, HEAD's branch, counts and the change marker. */
function summaryLine(state: LiveState): string {
  const h: Summary = {
    lastSeq: state.lastSeq,
    tips: state.tips,
    head: state.head,
    nodes: state.known.size,
    memo: state.memo.size,
  };
  if (typeof state.marker === 'string') h.m = state.marker;
  return JSON.stringify({ h });
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
      for (const [branch, tip] of Object.entries(state.tips))
        if ((await refs.resolve(`refs/heads/${branch}`)) !== tip) return false;
      return state.head === null || (await refs.headBranch()) === state.head;
    } catch (err) {
      if (isEntityGitError(err, 'REF_CORRUPT')) return false;
      throw err;
    }
  }

  private async read(gitdir: string, config: string): Promise<LiveState | null> {
    const paths = await this.located(gitdir);
    if (paths === null) return null;
    const text = await this.store.readText(paths.header);
    if (text === null) return null;
    let header: Header;
    try {
      header = JSON.parse(text) as Header;
    } catch {
      return null;
    }
    if (header.v !== 3 || header.config !== config) return null;
    const sealed = Array.isArray(header.sealed) ? header.sealed : [];
    const decoder = new TextDecoder();
    const records: Record_[] = [];
    for (const [k, bytes] of sealed.entries()) {
      const log = await this.store.read(paths.sealed(k));
      if (typeof bytes !== 'number' || log === null || log.length !== bytes) return null;
      parseLines(decoder.decode(log), records);
    }
    // No live segment: none begun since the last seal.
    const live = await this.store.read(paths.log);
    if (live !== null) parseLines(decoder.decode(live), records);
    let last = records.length - 1;
    while (last >= 0 && !('h' in records[last]!)) last--;
    if (last < 0) return null;
    const known = new Map<string, Known>();
    const memo = new Map<string, string>();
    for (let i = 0; i < last; i++) {
      const r = records[i]!;
      if ('k' in r) {
        const n = unpackKnown(r.k);
        if (n === null) return null;
        known.set(n.id, n);
      } else if ('d' in r) known.delete(r.d);
      else if ('c' in r) memo.set(r.c[0], r.c[1]);
    }
    const h = (records[last] as { h: Summary }).h;
    if (known.size !== h.nodes || memo.size !== h.memo) return null;
    return {
      lastSeq: h.lastSeq,
      tips: h.tips,
      head: h.head,
      known,
      memo,
      records: last + 1,
      sealed,
      marker: typeof h.m === 'string' ? h.m : null,
    };
  }

  /** Where the state of `gitdir` is; null when it has no header. */
  private async located(gitdir: string): Promise<StatePaths | null> {
    const paths = statePaths(gitdir);
    return (await this.store.lstat(paths.header)) !== null ? paths : null;
  }

  /**
   * Persist `state` (appending `delta`, or rewriting the log when `delta` is null or it grew).
   * `host`: gives the event loop a turn while a large state is written whole.
   */
  async save(
    gitdir: string,
    {
      state,
      delta,
      config,
      host,
    }: { state: LiveState; delta: StateDelta | null; config: string; host?: HostYield | undefined },
  ): Promise<void> {
    const live = state.known.size + state.memo.size;
    if (delta === null || state.records > 2 * live + 1000) await this.rewrite(gitdir, state, config, host);
    else await this.append(gitdir, state, delta, config);
    remember(this.live, gitdir, { state, config }, LIVE_STATES);
  }

  /** The log written whole, sealed segments removed. */
  private async rewrite(gitdir: string, state: LiveState, config: string, host: HostYield | undefined): Promise<void> {
    const paths = statePaths(gitdir);
    const lines: string[] = [];
    for (const n of state.known.values()) {
      if (lines.length % 64 === 63) await host?.due();
      lines.push(JSON.stringify({ k: packKnown(n) }));
    }
    for (const c of state.memo) {
      if (lines.length % 64 === 63) await host?.due();
      lines.push(JSON.stringify({ c }));
    }
    lines.push(summaryLine(state));
    await host?.due();
    // The log first, then the header that names no sealed segment: a crash between the two
    // leaves the old segments before the new log, whose counts then disagree (rebuilt).
    await this.store.writeAtomic(paths.log, `${lines.join('\n')}\n`);
    await this.writeHeader(paths, config, []);
    state.records = lines.length;
    state.sealed = [];
    // Sealed segments are left behind only until the header no longer names them (also those
    // of a state that was not trusted, whose segments this one never knew).
    for (const name of await this.store.readdir(gitdir))
      if (/^entity-git-state\.\d+\.jsonl$/.test(name)) await this.store.remove(joinPath(gitdir, name));
  }

  /** `delta` appended to the log, which is sealed as a segment once it is large. */
  private async append(gitdir: string, state: LiveState, delta: StateDelta, config: string): Promise<void> {
    const paths = statePaths(gitdir);
    const logPath = paths.log;
    const lines: string[] = [];
    for (const id of delta.nodes) {
      const n = state.known.get(id);
      if (n) lines.push(JSON.stringify({ k: packKnown(n) }));
    }
    for (const id of delta.deleted) lines.push(JSON.stringify({ d: id }));
    for (const key of delta.memo) lines.push(JSON.stringify({ c: [key, state.memo.get(key)] }));
    lines.push(summaryLine(state));
    // Leading newline: ends a line torn by a crash, so it cannot swallow these records.
    const text = `\n${lines.join('\n')}\n`;
    await this.store.append(logPath, text);
    state.records += lines.length;
    const bytes = (await this.store.lstat(logPath))?.size ?? 0;
    if (bytes >= SEGMENT_BYTES) {
      // Sealed: the header names the segment before the rename makes it, so a crash between
      // the two leaves a header naming a segment that is not there (not trusted, rebuilt).
      const sealed = [...(state.sealed ?? []), bytes];
      const to = paths.sealed(sealed.length - 1);
      await this.writeHeader(paths, config, sealed);
      try {
        await this.store.fs.rename(logPath, to);
      } catch (err) {
        throw this.store.wrap(err, 'rename', to);
      }
      state.sealed = sealed;
    }
  }

  private async writeHeader(paths: StatePaths, config: string, sealed: number[]): Promise<void> {
    const header: Header = { v: 3, config };
    if (sealed.length > 0) header.sealed = sealed;
    await this.store.writeAtomic(paths.header, JSON.stringify(header));
  }

  /** Keep `state` in memory without writing (a sync that changed nothing the disk copy lacks). */
  keep(gitdir: string, state: LiveState, config: string): void {
    remember(this.live, gitdir, { state, config }, LIVE_STATES);
  }

  forget(gitdir: string): void {
    this.live.delete(gitdir);
  }

  /**
   * What the last sync recorded (its tips, HEAD's branch, the change marker), read from the end of
   * the log alone: the last summary record, in time that does not grow with the session. Null when
   * there is no whole summary to read (no state, or a state written before markers).
   */
  async recorded(
    gitdir: string,
    config: string,
  ): Promise<{ tips: Record<string, string>; head: string | null; marker: string } | null> {
    const paths = await this.located(gitdir);
    if (paths === null) return null;
    let path = paths.log;
    let size = (await this.store.lstat(path))?.size ?? 0;
    // The header names the config the state was computed under: another config's state is not this one's.
    const text = await this.store.readText(paths.header);
    let header: Header;
    try {
      if (text === null) return null;
      header = JSON.parse(text) as Header;
    } catch {
      return null;
    }
    if (header.v !== 3 || header.config !== config) return null;
    if (size === 0) {
      // Just sealed: the summary ends the last sealed segment.
      const sealed: unknown = header.sealed;
      if (!Array.isArray(sealed) || sealed.length === 0) return null;
      path = paths.sealed(sealed.length - 1);
      size = (await this.store.lstat(path))?.size ?? 0;
    }
    // A summary is one line: its tips are most of it, ~60 bytes a branch.
    for (let window = 4096; ; window *= 4) {
      const start = Math.max(0, size - window);
      const bytes = await this.store.readRange(path, start, size);
      if (bytes === null) return null;
      const lines = new TextDecoder().decode(bytes).split('\n');
      // The first line of a window that does not start the file may be cut: not trusted.
      for (let i = lines.length - 1; i >= (start === 0 ? 0 : 1); i--) {
        if (!lines[i]!.startsWith('{"h":')) continue;
        let h: Summary;
        try {
          h = (JSON.parse(lines[i]!) as { h: Summary }).h;
        } catch {
          continue; // torn by a crash: the one before it holds
        }
        return typeof h.m === 'string' ? { tips: h.tips, head: h.head, marker: h.m } : null;
      }
      if (start === 0) return null;
    }
  }
}
