// A watch on a shadow repository's work tree, one inotify watch per directory (Node's `fs.watch`,
// not recursive: Node 20's recursive mode on Linux adds a watch per file), so that a snapshot can
// re-examine only the paths changed since the previous one instead of walking the whole tree. It
// vouches for an interval only when it watched every directory from the interval's start to its
// end, with no error and no sign of a lost event; otherwise the snapshot walks the whole tree.
// docs/design.md §7, "When a snapshot trusts the watcher".
import { type FSWatcher, watch } from 'node:fs';
import { lstat, mkdir, opendir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as slicedFs from './shadow-sliced-fs.js';
import { traced } from './shadow-trace.js';

/** Past this many changed paths a walk of the whole tree is as cheap, and the list is not kept. */
const MAX_PATHS = 2_000;
/** How long the barrier event may take before the interval is given up on. */
const BARRIER_TIMEOUT_MS = 5_000;

/** The kernel's event queue length: events past it are dropped silently (libuv does not report the overflow). */
async function eventLimit(): Promise<number> {
  const text = await readFile('/proc/sys/fs/inotify/max_queued_events', 'utf8').catch(() => '');
  const queued = Number.parseInt(text, 10);
  // An overflow needs a full queue, all of whose events are delivered: seeing half as many says it may have come.
  return Number.isSafeInteger(queued) && queued > 0 ? Math.floor(queued / 2) : 8_192;
}

/** The paths changed in an interval (relative, `/`), or null when the watcher cannot vouch for it. */
export type WatchedChanges = { readonly paths: readonly string[] } | null;

export class ShadowWatcher {
  readonly #workdir: string;
  readonly #barrierDir: string;
  /** One fs watcher per watched directory, by relative path (`''`: the work tree's root). */
  readonly #dirs = new Map<string, FSWatcher>();
  readonly #changed = new Set<string>();
  readonly #pending = new Set<Promise<void>>();
  readonly #waiters = new Map<string, () => void>();
  #barrier: FSWatcher | null = null;
  /** The work tree's and the barrier directory's device and inode when watching began. */
  #roots = '';
  #barrierSeq = 0;
  #events = 0;
  #limit = 8_192;
  /** Why the current interval cannot be vouched for; null while it can. */
  #broken: string | null = 'not started';
  /** Set when the watch could not be started: every snapshot of this process then walks. */
  #disabled: string | null = null;
  #closed = false;

  /** `stateDir`: a private directory outside the work tree, for the barrier file. */
  constructor(workdir: string, stateDir: string) {
    this.#workdir = workdir;
    this.#barrierDir = join(stateDir, 'watch');
  }

  /** Why the last interval was not vouched for (null when it was): for tests and diagnostics. */
  get reason(): string | null {
    return this.#disabled ?? this.#broken;
  }

  /**
   * Ends the current interval and starts the next: the paths changed since the previous call, or
   * null when the watcher cannot vouch for the interval (the first call, an error, too many
   * events, a root `.gitignore` change). Every event of a change made before the call (by any
   * process) is in the answer: a barrier file written after it comes through the same kernel
   * queue last.
   */
  async take(): Promise<WatchedChanges> {
    if (this.#disabled !== null || this.#closed) return null;
    if (this.#broken === null) await this.#settle();
    const paths = this.#broken === null ? [...this.#changed] : null;
    if (this.#broken !== null) await this.#restart();
    this.#changed.clear();
    this.#events = 0;
    return paths === null ? null : { paths };
  }

  /** Stops watching for good. */
  close(): void {
    this.#closed = true;
    this.#unwatchAll();
    for (const wake of this.#waiters.values()) wake();
  }

  async #restart(): Promise<void> {
    this.#unwatchAll();
    this.#broken = null;
    this.#limit = await eventLimit();
    try {
      await mkdir(this.#barrierDir, { recursive: true, mode: 0o700 });
      this.#barrier = watch(this.#barrierDir, { persistent: false }, (_type, name) => this.#barrierEvent(name));
      this.#barrier.on('error', (err) => this.#break(`barrier: ${err.message}`));
      this.#roots = await this.#rootIdentity();
      await this.#watchTree('');
      await this.#drain();
    } catch (err) {
      this.#disabled = `the watch could not start: ${(err as Error).message}`;
      this.#unwatchAll();
    }
    if (this.#closed) this.#broken = 'closed';
  }

  /** Every directory walk an event started is done, and every event before now is delivered. */
  async #settle(): Promise<void> {
    await traced('watcher.drain', () => this.#drain());
    // A work tree (or barrier directory) removed and made again is a new directory nobody watches.
    if ((await traced('watcher.roots', () => this.#rootIdentity())) !== this.#roots)
      return this.#break('the work tree was replaced');
    const name = `b${++this.#barrierSeq}`;
    let timer: NodeJS.Timeout | undefined;
    const arrived = new Promise<boolean>((done) => {
      this.#waiters.set(name, () => done(true));
      timer = setTimeout(() => done(false), BARRIER_TIMEOUT_MS);
    });
    try {
      await traced('watcher.barrier-write', () => slicedFs.writeFile(join(this.#barrierDir, name), ''));
      if (!(await traced('watcher.barrier-event', () => arrived)))
        this.#break('the barrier event did not come (an overflowed queue?)');
    } catch (err) {
      this.#break(`barrier: ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
      this.#waiters.delete(name);
      await traced('watcher.barrier-rm', () => slicedFs.rm(join(this.#barrierDir, name))).catch(() => undefined);
    }
    // Events delivered before the barrier may have started walks of new directories.
    await this.#drain();
  }

  async #rootIdentity(): Promise<string> {
    const ids = await Promise.all(
      [this.#workdir, this.#barrierDir].map((p) =>
        slicedFs.lstat(p).then(
          (s) => `${s.dev}:${s.ino}`,
          () => 'gone',
        ),
      ),
    );
    return ids.join(' ');
  }

  /** Only the barrier files' names come here; any other is the directory itself going away. */
  #barrierEvent(name: string | Buffer | null): void {
    const wake = name === null ? undefined : this.#waiters.get(String(name));
    if (wake) wake();
    else if (name === null || !/^b\d+$/.test(String(name))) {
      this.#break('the barrier directory went');
      for (const w of this.#waiters.values()) w();
    }
  }

  async #drain(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all(this.#pending);
  }

  #break(reason: string): void {
    this.#broken ??= reason;
  }

  #unwatchAll(): void {
    for (const w of this.#dirs.values()) w.close();
    this.#dirs.clear();
    this.#barrier?.close();
    this.#barrier = null;
  }

  /** Watches `rel` (a directory) and every directory under it, except `.git` directories. */
  async #watchTree(rel: string): Promise<void> {
    if (this.#closed || this.#dirs.has(rel)) return;
    const abs = rel === '' ? this.#workdir : join(this.#workdir, rel);
    // Watched before listed: an entry made in between comes both ways, none comes neither way.
    const w = watch(abs, { persistent: false }, (type, name) => this.#event(rel, type, name));
    w.on('error', (err) => this.#break(`${rel || '.'}: ${err.message}`));
    this.#dirs.set(rel, w);
    const dir = await opendir(abs).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null; // gone already: its parent's event names it
      throw err;
    });
    if (dir === null) return;
    const walks: Promise<void>[] = [];
    for await (const entry of dir)
      if (entry.isDirectory() && entry.name !== '.git')
        walks.push(this.#watchTree(rel ? `${rel}/${entry.name}` : entry.name));
    await Promise.all(walks);
  }

  #event(rel: string, type: string, name: string | Buffer | null): void {
    if (this.#closed || this.#broken !== null) return;
    const lost = this.#lost(++this.#events, name);
    if (lost !== null) {
      this.#break(lost);
      return;
    }
    const base = String(name);
    const path = rel ? `${rel}/${base}` : base;
    // The work tree's own .git is never in a snapshot; a nested one changes how git sees its directory.
    if (base === '.git' || base === '.gitignore') {
      if (rel === '' && base === '.gitignore') this.#break('the root .gitignore changed');
      if (rel !== '') this.#changed.add(rel);
    } else this.#changed.add(path);
    if (this.#changed.size > MAX_PATHS) this.#break(`more than ${MAX_PATHS} paths changed`);
    else if (type === 'rename' && base !== '.git') this.#track(this.#renamed(path));
  }

  /** Why an event leaves the interval unvouched for, or null. */
  #lost(events: number, name: string | Buffer | null): string | null {
    if (events > this.#limit) return 'too many events: the kernel queue may have overflowed';
    if (name === null) return 'an event without a name';
    // A name that is not UTF-8 cannot be handed to git as it is: only a walk finds its file.
    if (String(name).includes('\uFFFD')) return 'a file name that is not UTF-8';
    return null;
  }

  /**
   * A name came or went in a directory. A directory that went (deleted, or moved: its watches
   * would go on reporting under the old name) is unwatched; one that came is watched. What it held
   * is covered by its own path, which the snapshot examines whole.
   */
  async #renamed(path: string): Promise<void> {
    if (this.#dirs.has(path)) {
      const prefix = `${path}/`;
      for (const [rel, w] of this.#dirs)
        if (rel === path || rel.startsWith(prefix)) {
          w.close();
          this.#dirs.delete(rel);
        }
    }
    const info = await lstat(join(this.#workdir, path)).catch(() => null);
    if (info?.isDirectory()) await this.#watchTree(path);
  }

  #track(work: Promise<void>): void {
    const tracked = work.catch((err: Error) => this.#break(err.message)).finally(() => this.#pending.delete(tracked));
    this.#pending.add(tracked);
  }
}
