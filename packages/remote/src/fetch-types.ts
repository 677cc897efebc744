import type { Identity } from '@entity-git/git';
import type { RemoteTarget, SessionTarget } from './target.js';

export interface FetchOptions extends RemoteTarget {
  sessionId: string;
  /**
   * Create the repository when the session has none (what restore does). Default false:
   * `SESSION_NOT_FOUND`.
   */
  create?: boolean;
  /**
   * Move local branches that have diverged from the host's to the host's tips (the old tips
   * stay in the reflog). Default false: they are reported in `diverged` and left alone.
   */
  force?: boolean;
  /**
   * Which branch HEAD names afterwards. `auto` (default): the host's HEAD record when this
   * repository holds nothing the host lacks (no branch ahead, diverged or only local — a
   * replica), else HEAD stays; `remote`: the host's record; `local`: HEAD stays.
   */
  head?: 'auto' | 'remote' | 'local';
  /** Who the reflog says moved the branches. Default the mirror's `entity-git <entity-git@localhost>`. */
  identity?: Identity;
}

export interface FetchResult {
  sessionId: string;
  /** The repository's URL, without credentials. */
  url: string;
  /** True when the host has no branch at all (nothing was changed, no repository created). */
  empty: boolean;
  /** True when this fetch created the local repository. */
  repositoryCreated: boolean;
  /** True when objects were downloaded (false when every advertised commit was already here). */
  downloaded: boolean;
  /** Local branches created at the host's tip. */
  created: string[];
  /** Local branches that were behind and moved forward to the host's tip. */
  fastForwarded: string[];
  /** Diverged branches moved to the host's tip (`force`). */
  forced: string[];
  /** Branches equal on both sides. */
  upToDate: string[];
  /** Local branches ahead of the host's (a push sends them). */
  ahead: string[];
  /** Branches that diverged and were left alone (see `force`). */
  diverged: string[];
  /** Local branches the host does not have. */
  localOnly: string[];
  /** The branch HEAD names afterwards (null when unborn). */
  head: string | null;
  /** The branch the host's HEAD record names (null: no record). */
  remoteHead: string | null;
  headMoved: boolean;
  /** True when the working tree and index were rewritten (storages with a working tree). */
  worktreeChanged: boolean;
}

/** The first phase's value: the session's target opened, its options checked. */
export interface Connected {
  readonly target: SessionTarget;
  readonly options: FetchOptions;
  /** Who the reflog says moved the branches. */
  readonly identity: Identity;
}

/** The second phase's value: what the host has. */
export interface Advertised extends Connected {
  /** Every ref the host advertises, by name. */
  readonly advertised: Map<string, string>;
  /** The host's branches (`refs/heads/…`), `main` first, then by name. */
  readonly heads: string[];
}

/** The third phase's value: a repository to fetch into, whose config names the remote. */
export interface Prepared extends Advertised {
  /** This fetch made the repository. */
  readonly repositoryCreated: boolean;
}

/** The fourth phase's value: every tip the host advertises present here, and what to do with the meta ref. */
export interface Downloaded extends Prepared {
  /** The tip of each branch and of the HEAD record, as isomorphic-git saw them when it downloaded. */
  readonly tips: Map<string, string>;
  /** Objects were downloaded. */
  readonly downloaded: boolean;
  /** The meta ref: the host's value, this repository's (null: none; undefined: damaged), and whether the host's is taken. */
  readonly meta: { theirs: string | undefined; ours: string | null | undefined; take: boolean };
  /** The branch the host's HEAD record names (null: no record). */
  readonly remoteHead: string | null;
}
