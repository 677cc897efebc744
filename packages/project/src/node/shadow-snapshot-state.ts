// What this process knows of a shadow repository between its snapshots: its work tree's watcher
// and what the last snapshot it took left behind (the tip, the index file's identity, the files
// over the size cap). A snapshot takes the fast path only when all of it still holds: nobody else
// moved the tip or wrote the index since. docs/design.md §7, "When a snapshot trusts the watcher".
import { join } from 'node:path';
import { KnownDirs } from './shadow-fast-plan.js';
import { readFile, statBig } from './shadow-sliced-fs.js';
import { traced } from './shadow-trace.js';
import { ShadowWatcher } from './shadow-watcher.js';

/** What the last snapshot of this process left. */
export interface LastSnapshot {
  readonly tip: string;
  /** The index file's inode, size and times after it. */
  readonly index: string;
  /** The size cap it applied. */
  readonly maxFileBytes: number;
  readonly overSizeCap: ReadonlySet<string>;
}

/** The changed paths a snapshot may restrict itself to, with what it builds on. */
export interface FastPath {
  readonly paths: readonly string[];
  readonly last: LastSnapshot;
  /** What the earlier fast plans learnt of the directories, less what the paths may have changed. */
  readonly dirs: KnownDirs;
}

export class SnapshotState {
  readonly #gitDir: string;
  readonly watcher: ShadowWatcher;
  readonly #dirs = new KnownDirs();
  #last: LastSnapshot | null = null;

  constructor(gitDir: string, workdir: string, stateDir: string) {
    this.#gitDir = gitDir;
    this.watcher = new ShadowWatcher(workdir, stateDir);
  }

  /**
   * Ends the watcher's interval (always, so the next one starts now) and says whether this
   * snapshot may look at its paths alone: null means walk the whole tree. Forgets the last
   * snapshot until {@link remember} is called again, so a snapshot that fails half-way is
   * followed by a walk.
   */
  async begin(maxFileBytes: number): Promise<FastPath | null> {
    const changes = await traced('watcher', () => this.watcher.take());
    const last = this.#last;
    this.#last = null;
    const vouched =
      changes !== null &&
      last !== null &&
      last.maxFileBytes === maxFileBytes &&
      (await traced('index-identity', () => this.#indexIdentity())) === last.index &&
      (await traced('loose-tip', () => this.#looseTip())) === last.tip;
    if (!vouched) {
      this.#dirs.clear();
      return null;
    }
    this.#dirs.forget(changes.paths, await traced('exclude-identity', () => this.#excludeIdentity()));
    return { paths: changes.paths, last, dirs: this.#dirs };
  }

  /** Records what a snapshot that succeeded left. */
  async remember(tip: string, maxFileBytes: number, overSizeCap: Iterable<string>): Promise<void> {
    const index = await this.#indexIdentity();
    if (index !== null) this.#last = { tip, index, maxFileBytes, overSizeCap: new Set(overSizeCap) };
  }

  /** Forgets the last snapshot: the next one walks. */
  forget(): void {
    this.#last = null;
  }

  async #indexIdentity(): Promise<string | null> {
    return identity(join(this.#gitDir, 'index'));
  }

  async #excludeIdentity(): Promise<string> {
    return (await identity(join(this.#gitDir, 'info', 'exclude'))) ?? 'none';
  }

  /** The snapshots ref as a loose ref file says it (a packed ref reads as null: the walk then runs). */
  async #looseTip(): Promise<string | null> {
    const text = await readFile(join(this.#gitDir, 'refs', 'heads', 'snapshots'), 'utf8').catch(() => null);
    return text?.trim() || null;
  }
}

/** A file's device, inode, size and times, or null when there is none. */
async function identity(path: string): Promise<string | null> {
  const s = await statBig(path).catch(() => null);
  return s && `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}

/** One state per shadow git directory in this process. */
const states = new Map<string, SnapshotState>();

export function snapshotState(gitDir: string, workdir: string, stateDir: string): SnapshotState {
  let state = states.get(gitDir);
  if (state === undefined) states.set(gitDir, (state = new SnapshotState(gitDir, workdir, stateDir)));
  return state;
}

/**
 * Stops every shadow watcher of this process (they never keep it alive: `persistent: false`).
 * The next snapshot of each project walks its whole tree and starts a watcher again.
 */
export function closeShadowWatchers(): void {
  for (const state of states.values()) state.watcher.close();
  states.clear();
}
