import {
  type EntityGitError,
  countPacks,
  isEntityGitError,
  LOCK_DEFAULTS,
  type LockOptions,
  lockOptions,
  normaliseError,
  type PackReport,
  type Storage,
  joinPath,
  type Store,
  storeFor,
  tryLockFile,
} from '@entity-git/git';
import { packSession } from './pack-session.js';
import { repoFile } from '../mirror/repo/files.js';
import type { Logger } from '../observe/logger.js';
import { codeOf, emitLog, messageOf, now, since } from '../observe/loggers.js';

export interface PackerOptions {
  /** The storage the repositories are on. */
  storage: Storage;
  /**
   * How one repository is packed. Default: {@link packSession} (no git needed). On Node,
   * `nativeRepack` from @entity-git/node-fs runs `git repack` instead.
   */
  pack?: (gitdir: string) => Promise<PackReport | void>;
  /** Pack a repository once it has at least this many loose objects. Default 256. */
  looseObjects?: number;
  /** …or at least this many packs (a mirror writes one per turn, see `packTurns`). Default 16. */
  packs?: number;
  /** Wait this long after the last request for a repository before looking at it. Default 500 ms. */
  delayMs?: number;
  /**
   * The pack lock (`.git/entity-git-pack.lock`): `staleMs`, after which one left by a killed
   * packer is taken over. Default `LOCK_DEFAULTS.pack` (10 min). It is never waited for: a
   * repository another packer holds is passed over, and a later request packs it.
   */
  lock?: Partial<Pick<LockOptions, 'staleMs'>>;
  /** Told of each pack written and of each failure (packing never throws into anyone). */
  onPacked?: (gitdir: string, report: PackReport | void) => void;
  onError?: (gitdir: string, error: EntityGitError) => void;
  /** Where each packing run is reported (`packer.packed`: objects, bytes, duration). Default: none. */
  logger?: Logger;
}

/**
 * Packs session repositories in the background, one at a time, never inside a turn: a sync asks
 * with `request` (it returns at once) and the packer looks at the repository once it has been
 * quiet for `delayMs`. Packing takes no session lock — it cannot hold a turn back — and cannot
 * lose an object a sync writes meanwhile: the pack's index appears only when the pack is whole,
 * and only loose files the new pack holds are removed. Two packers on one repository are kept
 * apart by `.git/entity-git-pack.lock`.
 */
export interface Packer {
  request(gitdir: string): void;
  /** Resolves when every requested repository has been looked at (and packed if due). */
  idle(): Promise<void>;
  /** Look at one repository now; resolves with what was done (null: not due, or locked). */
  packNow(gitdir: string): Promise<PackReport | void | null>;
}

/** Loose objects of a repository: every file in its 256 fan-out directories. */
export async function countLooseObjects(store: Store, gitdir: string): Promise<number> {
  let n = 0;
  for (let i = 0; i < 256; i++) {
    const dir = joinPath(gitdir, 'objects', i.toString(16).padStart(2, '0'));
    for (const name of await store.readdir(dir)) if (/^[0-9a-f]{38}$/.test(name)) n++;
  }
  return n;
}

/** A {@link BackgroundPacker} over `options`. */
export function createPacker(options: PackerOptions): Packer {
  return new BackgroundPacker(options);
}

/** The packer of {@link createPacker}: one repository at a time, each after its quiet delay. */
class BackgroundPacker implements Packer {
  readonly #options: PackerOptions;
  readonly #store: Store;
  readonly #threshold: number;
  readonly #packsThreshold: number;
  readonly #delayMs: number;
  readonly #staleMs: number;
  readonly #pack: (gitdir: string) => Promise<PackReport | void>;
  /** A repository's quiet delay, by gitdir: a request meanwhile starts it over. */
  readonly #timers = new Map<string, ReturnType<typeof setTimeout>>();
  /** Repositories whose delay is over, to be looked at in turn. */
  readonly #waiting: string[] = [];
  #running: Promise<void> | null = null;
  /** Who waits in `idle()`, told once nothing is waiting or running. */
  #settle: (() => void)[] = [];

  constructor(options: PackerOptions) {
    this.#options = options;
    const store = storeFor(options.storage);
    this.#store = store;
    this.#threshold = options.looseObjects ?? 256;
    this.#packsThreshold = options.packs ?? 16;
    this.#delayMs = options.delayMs ?? 500;
    this.#staleMs = lockOptions(LOCK_DEFAULTS.pack, { staleMs: options.lock?.staleMs }, 'packer.lock').staleMs;
    this.#pack = options.pack ?? ((gitdir: string) => packSession(store, gitdir));
  }

  request(gitdir: string): void {
    clearTimeout(this.#timers.get(gitdir));
    const timer = setTimeout(() => {
      this.#timers.delete(gitdir);
      if (!this.#waiting.includes(gitdir)) this.#waiting.push(gitdir);
      this.#pump();
    }, this.#delayMs);
    // A background chore: it must not keep a process alive on its own.
    (timer as { unref?: () => void }).unref?.();
    this.#timers.set(gitdir, timer);
  }

  async idle(): Promise<void> {
    // Requests still in their delay are looked at now.
    for (const [gitdir, timer] of this.#timers) {
      clearTimeout(timer);
      if (!this.#waiting.includes(gitdir)) this.#waiting.push(gitdir);
    }
    this.#timers.clear();
    if (this.#running === null && this.#waiting.length === 0) return;
    const done = new Promise<void>((resolve) => this.#settle.push(resolve));
    this.#pump();
    await done;
  }

  /** Pack `gitdir` if it is due and nobody else packs it (null: not due, or locked). */
  async packNow(gitdir: string): Promise<PackReport | void | null> {
    const store = this.#store;
    const due =
      (await countPacks(store, gitdir)) >= this.#packsThreshold ||
      (await countLooseObjects(store, gitdir)) >= this.#threshold;
    if (!due) return null;
    const lock = repoFile(gitdir, 'pack.lock');
    if (!(await this.#take(lock))) return null;
    try {
      return await this.#pack(gitdir);
    } finally {
      await store.remove(lock);
    }
  }

  #pump(): void {
    if (this.#running !== null) return;
    const gitdir = this.#waiting.shift();
    if (gitdir === undefined) {
      const done = this.#settle;
      this.#settle = [];
      for (const f of done) f();
      return;
    }
    const options = this.#options;
    const { logger } = options;
    const start = now();
    this.#running = this.packNow(gitdir)
      .then((report) => {
        logPackerRun(logger, { gitdir, start, report });
        if (report !== null) options.onPacked?.(gitdir, report);
      })
      .catch((err: unknown) => {
        logPackerRun(logger, { gitdir, start, report: undefined, error: err });
        options.onError?.(gitdir, normaliseError(err, { code: 'STORAGE_ERROR', what: 'packing failed' }));
      })
      .finally(() => {
        this.#running = null;
        this.#pump();
      });
  }

  /**
   * Take the lock file `lock` if nobody holds it, or one left for the stale time. False also when
   * its directory is gone (the repository was removed): nothing to pack.
   */
  async #take(lock: string): Promise<boolean> {
    try {
      return await tryLockFile(this.#store, lock, `${Date.now()}\n`, this.#staleMs);
    } catch (err) {
      const code = isEntityGitError(err, 'STORAGE_ERROR') ? err.data.fsCode : undefined;
      if (code === 'ENOENT') return false;
      throw err;
    }
  }
}

/** One packing run, as {@link logPackerRun} reports it: `error` when it failed, `report` null when nothing was due. */
interface PackerRun {
  gitdir: string;
  /** When the run started (`now()`). */
  start: number;
  report: PackReport | void | null;
  error?: unknown;
}

/** `packer.packed` (info: objects, bytes, loose files removed) or `packer.failed` (warn), timed. */
function logPackerRun(logger: Logger | undefined, { gitdir, start, report, error }: PackerRun): void {
  if (logger === undefined || report === null) return;
  if (error !== undefined) {
    emitLog(logger, 'warn', 'packer.failed', {
      gitdir,
      durationMs: since(start),
      code: codeOf(error),
      message: messageOf(error),
    });
    return;
  }
  emitLog(
    logger,
    'info',
    'packer.packed',
    report
      ? {
          gitdir,
          durationMs: since(start),
          pack: report.pack,
          objects: report.objects,
          bytes: report.bytes,
          looseRemoved: report.looseRemoved,
          packsRemoved: report.packsRemoved ?? 0,
        }
      : { gitdir, durationMs: since(start) },
  );
}
