import { isOid } from '@entity-git/git';
import type { PendingEdit, ProjectJournal } from './project-coordination.js';
import type { FileState, InFlightCommit, ProjectGitEngine, RepoState } from './project-git-engine.js';

/** The default journal: pending edits in this process's memory. */
export function memoryJournal(): ProjectJournal {
  const byRoot = new Map<string, readonly PendingEdit[]>();
  return {
    read: async (root) => [...(byRoot.get(root) ?? [])],
    write: async (root, edits) => {
      if (edits.length === 0) byRoot.delete(root);
      else byRoot.set(root, [...edits]);
    },
  };
}

/** A project's journal within one locked section (see openJournal). */
export interface Journal {
  readonly all: readonly PendingEdit[];
  write(next: readonly PendingEdit[]): Promise<void>;
}
export const isInFlight = (e: PendingEdit): boolean => e.inFlight !== undefined && e.inFlight !== null;
/** A journal record of an in-flight commit as JSON brought it back: usable, or to be dropped. */
export const validFlight = (f: InFlightCommit): boolean =>
  typeof f === 'object' &&
  f !== null &&
  isOid(f.commit) &&
  (f.parent === null || isOid(f.parent)) &&
  typeof f.branch === 'string' &&
  Array.isArray(f.paths) &&
  f.paths.every((p) => typeof p === 'string');

/** The journal of pending edits as one project's turn uses it, under the lock of its repository. */
export class PendingJournal {
  readonly #engine: ProjectGitEngine;
  readonly #journal: ProjectJournal;
  readonly #now: () => number;
  readonly #ttl: number;

  constructor(engine: ProjectGitEngine, journal: ProjectJournal, now: () => number, ttl: number) {
    this.#engine = engine;
    this.#journal = journal;
    this.#now = now;
    this.#ttl = ttl;
  }

  /**
   * The journal of `root` for one locked section: read once, then kept as it is written (nothing
   * else writes it while the lock is held).
   */
  async open(root: string): Promise<Journal> {
    const journal = this.#journal;
    let all: readonly PendingEdit[] = await journal.read(root);
    return {
      get all() {
        return all;
      },
      async write(next) {
        await journal.write(root, next);
        all = next;
      },
    };
  }

  /** The pending edits not yet expired (in-flight commit records are not pending edits). */
  fresh(j: Journal): PendingEdit[] {
    const cutoff = this.#now() - this.#ttl;
    return j.all.filter((e) => !isInFlight(e) && e.at >= cutoff);
  }

  /** Replace the pending edits, keeping the in-flight commit records. */
  write(j: Journal, edits: readonly PendingEdit[]): Promise<void> {
    return j.write([...j.all.filter(isInFlight), ...edits]);
  }

  /** The current content of the dirty paths that pending edits name: the only files ever hashed. */
  async currentOf(
    repo: RepoState,
    paths: readonly string[],
    pending: readonly PendingEdit[],
  ): Promise<Map<string, FileState>> {
    const named = new Set(pending.flatMap((e) => e.files.map((f) => f.path)));
    const wanted = paths.filter((p) => named.has(p));
    const current = new Map<string, FileState>();
    if (wanted.length > 0) for (const f of await this.#engine.hashPaths(repo, wanted)) current.set(f.path, f);
    return current;
  }
}
