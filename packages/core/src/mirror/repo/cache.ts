import type { CommitGraph, IndexEntry, SharedIndex, StorageStat, Store } from '@entity-git/git';
import type { Derivation } from '../../model/derive.js';
import type { Layout } from '../mirror.js';
import { StateCache, type Known, type LiveState } from './state.js';
import type { BranchBuild } from '../branch-build.js';

/**
 * What the last sync of a repository derived and built, kept in memory with its state: a turn
 * that only continues one branch is derived and committed from it, in time that does not grow
 * with the session.
 */
export interface KeptPlan {
  state: LiveState;
  sessionHead: string | null;
  derivation: Derivation<Known>;
  builds: Map<string, BranchBuild>;
}

/** The index entries a mirror last wrote, the file they were written to, and its shared index. */
export interface CachedIndex {
  /** The index file's {@link fileId} right after the write (or read). */
  id: string;
  entries: IndexEntry[];
  shared: SharedIndex | null;
  /** The entries the shared index does not hold (all of them without one). */
  added: IndexEntry[];
}

/** The first-parent chain below a tip as far as a replay has walked it (tip first). */
export interface WalkedChain {
  links: { sha: string; parent: string | null; turn: number | null }[];
  /** A commit's place in `links`. */
  index: Map<string, number>;
  /** True once the walk reached the root (or a commit seen before). */
  done: boolean;
}

/** A file's identity for "is it still the one I wrote": inode, size and modification time. */
export function fileId(st: StorageStat): string {
  return `${st.ino}:${st.size}:${st.mtimeNs ?? st.mtimeMs}:${st.ctimeNs ?? st.ctimeMs ?? ''}`;
}
export const sameFile = (id: string, st: StorageStat): boolean => id === fileId(st);

/**
 * Everything a mirror keeps in memory between calls, by repository (its gitdir). Only caches:
 * each is checked before use (a file's identity, the refs, the object it names) or holds what
 * never changes once written, so dropping any of them changes what a call reads, never what
 * it writes. Each holds at most {@link LIVE_STATES} (64) keys, the least recently stored
 * dropped first (`remember`).
 */
export class RepoCache {
  /** Per repository: the state of its last sync (`repo/state.ts`; at most 64, checked against the refs before use). */
  readonly states: StateCache;
  /**
   * Per repository: the index this mirror last wrote or read, while the index file is still that
   * one (same {@link fileId}); taken out while a checkout replaces it. At most 64.
   */
  readonly indexes = new Map<string, CachedIndex>();
  /** Per repository: its commit-graph as last read, and the file it was read from (reread when it changes). At most 64. */
  readonly graphs = new Map<string, { id: string; graph: CommitGraph | null }>();
  /**
   * Per repository: the plan of the last sync, valid while its state object is the one loaded;
   * taken out when a sync begins, put back when one ends without an unknown head. At most 64.
   */
  readonly plans = new Map<string, KeptPlan>();
  /** Repositories whose config records today's format (a recorded format never changes). At most 64. */
  readonly formats = new Map<string, true>();
  /** Per repository: the layout its config records (a recorded layout never changes). At most 64. */
  readonly layouts = new Map<string, Layout>();
  /**
   * Per tip (`gitdir` NUL tip): the first-parent chain below it as far as a replay has walked it
   * (the chain below a commit never changes). At most 64 tips.
   */
  readonly chains = new Map<string, WalkedChain>();

  constructor(store: Store) {
    this.states = new StateCache(store);
  }
}
