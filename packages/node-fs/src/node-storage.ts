import { hostname, homedir } from 'node:os';
import * as fsp from 'node:fs/promises';
import * as fss from 'node:fs';
import { dirname, join } from 'node:path';
import { EntityGitError } from '@entity-git/core';
import {
  LOCK_DEFAULTS,
  type LockOptions,
  lockOptions,
  type Storage,
  type StorageFs,
  type WorkTreeFile,
} from '@entity-git/git';
import { nodeCodec } from './node-codec.js';
import { NodeStat, writeFilesOffThread } from './node-write-files.js';

export { nodeCodec };

export const DRIVER_NAME = 'node-fs';

export interface NodeStorageOptions {
  /**
   * fsync every file the mirror writes before it is renamed into place. Default `false`, as git's
   * own default: a crash may then lose the newest objects, which the next sync rewrites from the
   * DAG (the refs are only moved after the objects are written).
   */
  fsync?: boolean;
  /**
   * The sync lock, one lock file per session repository held across processes for a whole sync:
   * how long a sync waits for another process's (`timeoutMs`), and after how long one its holder
   * stopped refreshing is taken over (`staleMs`; a holder refreshes it every `staleMs / 3`, and
   * one whose process is gone on this host is taken over at once). Default `LOCK_DEFAULTS.sync`
   * (60 s, 30 s).
   */
  syncLock?: Partial<LockOptions>;
}

/** `~/.openprogram/sessions`, the default root of session repositories. */
export function defaultRoot(): string {
  return join(homedir(), '.openprogram', 'sessions');
}

/** Bytes of the file at `path` from `start` into `target`, up to its length; the count read. */
function readInto(path: string, start: number, target: Uint8Array): number {
  const fd = fss.openSync(path, 'r');
  try {
    let got = 0;
    while (got < target.length) {
      const n = fss.readSync(fd, target, got, target.length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    return got;
  } finally {
    fss.closeSync(fd);
  }
}

/**
 * Modes of what the storage creates: a session repository holds the whole conversation, so only
 * its owner reads it, whatever the process's umask (which can only take bits away from these).
 * An existing file keeps its mode; a caller that passes a mode (a project file's) gets it.
 */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

type WriteOptions = { mode?: number } | 'utf8' | undefined;
const privateFile = (o: WriteOptions): fss.WriteFileOptions =>
  typeof o === 'string' ? { encoding: o, mode: PRIVATE_FILE_MODE } : { ...o, mode: o?.mode ?? PRIVATE_FILE_MODE };

async function writeDurable(
  path: string,
  data: Uint8Array | string,
  flag: 'w' | 'wx',
  mode = PRIVATE_FILE_MODE,
): Promise<void> {
  const handle = await fsp.open(path, flag, mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Writes above this size go through the thread pool instead of blocking the event loop. */
const LARGE = 1 << 20;

/** The options in force: defaults filled in, the sync lock's checked (`INVALID_OPTION`). */
function frozenOptions(
  options: NodeStorageOptions,
): Readonly<{ fsync: boolean; syncLockTimeoutMs: number; staleMs: number }> {
  const { timeoutMs, staleMs } = lockOptions(LOCK_DEFAULTS.sync, options.syncLock, 'syncLock');
  return Object.freeze({ fsync: options.fsync ?? false, syncLockTimeoutMs: timeoutMs, staleMs });
}

/** What the adapter's functions share: the options in force and this host's name (for lock files). */
interface NodeStorageContext {
  readonly opts: ReturnType<typeof frozenOptions>;
  readonly host: string;
}

/**
 * The Node storage adapter: node:fs, node:crypto and node:zlib; create-exclusive with `wx`; a
 * cross-process lock file per key that a killed holder cannot leave behind for long (its pid is
 * checked on this host, and a holder refreshes the file while it runs).
 */
export function nodeStorage(options: NodeStorageOptions = {}): Storage {
  const ctx: NodeStorageContext = Object.freeze({ opts: frozenOptions(options), host: hostname() });
  const { opts } = ctx;
  return Object.freeze({
    name: DRIVER_NAME,
    fs: fileSystem(ctx),
    workTree: true,
    codec: nodeCodec,
    async createExclusive(path: string, data: Uint8Array | string): Promise<boolean> {
      try {
        if (opts.fsync) await writeDurable(path, data, 'wx');
        else fss.writeFileSync(path, data, { flag: 'wx', mode: PRIVATE_FILE_MODE });
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw err;
      }
    },
    writeFiles: (files: readonly WorkTreeFile[]) => writeFilesOffThread(files, opts.fsync),
    appendFile: async (path: string, data: Uint8Array | string) =>
      fss.appendFileSync(path, data, { mode: PRIVATE_FILE_MODE }),
    async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
      const out = Buffer.allocUnsafe(Math.max(0, end - start));
      const got = readInto(path, start, out);
      return got === out.length ? out : out.subarray(0, got);
    },
    async readRangeInto(path: string, start: number, target: Uint8Array): Promise<number> {
      return readInto(path, start, target);
    },
    withLock: <T>(key: string, fn: () => Promise<T>): Promise<T> => withLockFile(ctx, key, fn),
  });
}

/**
 * The storage's file system. Small-file operations run synchronously: a turn makes dozens of them,
 * and a thread-pool round trip per call cost more than the calls themselves (measured: most of a
 * turn's time was idle waiting). Large writes stay asynchronous so a huge tool output does not
 * stall the event loop.
 */
function fileSystem({ opts }: NodeStorageContext): StorageFs {
  return {
    readFile: async (p, o) => fss.readFileSync(p, o as never) as Uint8Array | string,
    writeFile: async (p, d, o) => {
      const options = privateFile(o);
      if (opts.fsync) return writeDurable(p, d, 'w', (options as { mode: number }).mode);
      if (d.length > LARGE) return fsp.writeFile(p, d, options);
      fss.writeFileSync(p, d, options);
    },
    unlink: async (p) => fss.unlinkSync(p),
    readdir: async (p) => fss.readdirSync(p),
    mkdir: async (p, o) => {
      fss.mkdirSync(p, { ...o, mode: o?.mode ?? PRIVATE_DIR_MODE });
    },
    rmdir: async (p) => fss.rmdirSync(p),
    stat: async (p) => new NodeStat(fss.statSync(p, { bigint: true })),
    lstat: async (p) => new NodeStat(fss.lstatSync(p, { bigint: true })),
    rename: async (a, b) => fss.renameSync(a, b),
    readlink: async (p) => fss.readlinkSync(p),
    symlink: async (t, p) => fss.symlinkSync(t, p),
  };
}

/** Run `fn` holding the lock file `key`, refreshed while it runs and removed after. */
async function withLockFile<T>(ctx: NodeStorageContext, key: string, fn: () => Promise<T>): Promise<T> {
  const { opts } = ctx;
  const deadline = Date.now() + opts.syncLockTimeoutMs;
  const attempt = async () => {
    try {
      return await tryLock(ctx, key);
    } catch (err) {
      const fsCode = (err as NodeJS.ErrnoException).code;
      const code = fsCode === 'ENOSPC' || fsCode === 'EDQUOT' ? 'QUOTA_EXCEEDED' : 'STORAGE_ERROR';
      throw new EntityGitError(
        code,
        `[${DRIVER_NAME}] cannot take the lock ${key}: ${(err as Error).message}`,
        { lock: key, fsCode },
        { cause: err },
      );
    }
  };
  for (let wait = 5; !(await attempt()); wait = Math.min(wait * 2, 200)) {
    if (Date.now() > deadline)
      throw new EntityGitError('LOCK_TIMEOUT', `[${DRIVER_NAME}] ${key} is held by another process`, { lock: key });
    await sleep(wait + Math.random() * wait);
  }
  const refresh = setInterval(
    () => {
      const now = new Date();
      fsp.utimes(key, now, now).catch(() => undefined);
    },
    Math.max(50, opts.staleMs / 3),
  );
  refresh.unref();
  try {
    return await fn();
  } finally {
    clearInterval(refresh);
    try {
      fss.unlinkSync(key);
    } catch {
      // taken over as stale by another process after a stall: nothing of ours to remove
    }
  }
}

async function tryLock(ctx: NodeStorageContext, path: string): Promise<boolean> {
  // Not fsynced: a lock only has to outlive its holder's process, not a power cut.
  try {
    fss.writeFileSync(path, JSON.stringify({ pid: process.pid, host: ctx.host, at: Date.now() }), {
      flag: 'wx',
      mode: PRIVATE_FILE_MODE,
    });
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      fss.mkdirSync(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
      return tryLock(ctx, path);
    }
    if (code !== 'EEXIST') throw err;
  }
  await takeOverIfGone(ctx, path);
  return false;
}

/** Someone holds the lock `path`: take it over only if the holder is provably gone. */
async function takeOverIfGone({ opts, host }: NodeStorageContext, path: string): Promise<void> {
  try {
    const [text, st] = await Promise.all([fsp.readFile(path, 'utf8'), fsp.stat(path)]);
    let holder: { pid?: number; host?: string } = {};
    try {
      holder = JSON.parse(text) as typeof holder;
    } catch {
      // half-written by a holder killed while creating it: judged by age alone
    }
    const dead =
      holder.host === host && typeof holder.pid === 'number' && holder.pid !== process.pid && !alive(holder.pid);
    if (dead || Date.now() - st.mtimeMs > opts.staleMs) {
      const grave = `${path}.stale-${process.pid}-${Date.now()}`;
      await fsp.rename(path, grave);
      await fsp.unlink(grave);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
