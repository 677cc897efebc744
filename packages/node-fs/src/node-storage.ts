import { createHash } from 'node:crypto';
import { hostname, homedir } from 'node:os';
import * as fsp from 'node:fs/promises';
import * as fss from 'node:fs';
import { dirname, join } from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';
import { Worker } from 'node:worker_threads';
import {
  EntityGitError,
  type Codec,
  type Storage,
  type StorageFs,
  type StorageStat,
  type WorkTreeFile,
} from '@entity-git/core';

export const DRIVER_NAME = 'node-fs';

export interface NodeStorageOptions {
  /**
   * fsync every file the mirror writes before it is renamed into place. Default `false`, as git's
   * own default: a crash may then lose the newest objects, which the next sync rewrites from the
   * DAG (the refs are only moved after the objects are written).
   */
  fsync?: boolean;
  /** How long a sync waits for another process's lock on the same session. Default 60 s. */
  syncLockTimeoutMs?: number;
  /** A held lock is refreshed every staleMs/3; one not refreshed for staleMs is taken over. Default 30 s. */
  staleMs?: number;
}

/** `~/.openprogram/sessions`, the default root of session repositories. */
export function defaultRoot(): string {
  return join(homedir(), '.openprogram', 'sessions');
}

/** A size hint above this is not trusted for a buffer (a corrupt entry could claim gigabytes). */
const INFLATE_HINT_MAX = 64 << 20;

/**
 * Level 1, with zlib's window and hash table sized to the input and an output buffer of about its
 * size. zlib's default state is about 256 KB, allocated and freed for every object, which a CPU
 * profile of a backfill showed as much of the time inside deflate. The compressed data is the
 * default's byte for byte (tested); only the header's window size differs, which readers take.
 */
function deflateOptions(length: number): { level: number; windowBits: number; memLevel: number; chunkSize: number } {
  const windowBits = Math.max(9, Math.min(15, Math.ceil(Math.log2(length + 262))));
  return {
    level: 1,
    windowBits,
    memLevel: Math.max(1, Math.min(8, windowBits - 6)),
    chunkSize: Math.max(64, Math.min(length + 64, 64 * 1024)),
  };
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

export const nodeCodec: Codec = Object.freeze({
  sha1: (data: Uint8Array) => createHash('sha1').update(data).digest('hex'),
  // Level 1: loose objects are short-lived (packing recompresses them); measured ~3x cheaper than
  // the default level on message trees for a few percent more bytes.
  deflate: (data: Uint8Array) => deflateSync(data, deflateOptions(data.length)),
  // With the size known (a pack entry's), the output buffer is that size: by default zlib's is
  // 16 KB, which a small blob's result keeps alive (measured: most of a replay's garbage).
  inflate: (data: Uint8Array, size?: number) =>
    inflateSync(
      data,
      size !== undefined && size < INFLATE_HINT_MAX ? { chunkSize: Math.max(64, size + 1) } : undefined,
    ),
  sha1Parts: (parts: readonly Uint8Array[]) => {
    const h = createHash('sha1');
    for (const p of parts) h.update(p);
    return h.digest('hex');
  },
});

/** What {@link NodeStat} is made from: a `BigIntStats`, or the same fields from the writer thread. */
interface StatFields {
  mode: bigint;
  size: bigint;
  ino: bigint;
  dev: bigint;
  uid: bigint;
  gid: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

const S_IFMT = 0o170000;

class NodeStat implements StorageStat {
  mode: number;
  size: number;
  ino: number;
  dev: number;
  uid: number;
  gid: number;
  mtimeMs: number;
  ctimeMs: number;
  mtimeNs: bigint;
  ctimeNs: bigint;
  constructor(s: StatFields) {
    this.mode = Number(s.mode);
    this.size = Number(s.size);
    this.ino = Number(s.ino);
    this.dev = Number(s.dev);
    this.uid = Number(s.uid);
    this.gid = Number(s.gid);
    this.mtimeMs = Number(s.mtimeNs / 1_000_000n);
    this.ctimeMs = Number(s.ctimeNs / 1_000_000n);
    this.mtimeNs = s.mtimeNs;
    this.ctimeNs = s.ctimeNs;
  }
  isFile(): boolean {
    return (this.mode & S_IFMT) === 0o100000;
  }
  isDirectory(): boolean {
    return (this.mode & S_IFMT) === 0o040000;
  }
  isSymbolicLink(): boolean {
    return (this.mode & S_IFMT) === 0o120000;
  }
}

/** The order of a file's stat fields in the writer thread's answer. */
const STAT_FIELDS = ['mode', 'size', 'ino', 'dev', 'uid', 'gid', 'mtimeNs', 'ctimeNs'] as const;

/**
 * The writer thread of {@link writeFilesOffThread} (CommonJS, evaluated): writes each file in
 * place (its parent made when missing), fsynced when asked, and answers with every file's lstat
 * fields, or with the first failure (a file a full disk cut short is removed).
 */
const WRITER = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { dirname } = require('node:path');
const FIELDS = ${JSON.stringify(STAT_FIELDS)};
function write(path, data, fsync) {
  for (let attempt = 0; ; attempt++) {
    try {
      if (!fsync) return fs.writeFileSync(path, data);
      const fd = fs.openSync(path, 'w', 0o644);
      try { fs.writeSync(fd, data); fs.fsyncSync(fd); } finally { fs.closeSync(fd); }
      return;
    } catch (err) {
      if (err.code !== 'ENOENT' || attempt >= 4) throw err;
      fs.mkdirSync(dirname(path), { recursive: true });
    }
  }
}
function run({ buffer, ends, paths, fsync }) {
  const bytes = new Uint8Array(buffer);
  const stats = new BigUint64Array(paths.length * FIELDS.length);
  // Directories first: files created in a directory made among them were slower to create (ext4,
  // this machine kind) than in one made before them. A directory that cannot be made fails its first
  // file's write, in order.
  for (const dir of new Set(paths.map(dirname))) {
    try { fs.mkdirSync(dir, { recursive: true }); } catch {}
  }
  let start = 0;
  for (let i = 0; i < paths.length; i++) {
    const path = paths[i];
    try {
      write(path, bytes.subarray(start, ends[i]), fsync);
      const st = fs.lstatSync(path, { bigint: true });
      FIELDS.forEach((f, k) => { stats[i * FIELDS.length + k] = st[f]; });
    } catch (err) {
      if (err.code === 'ENOSPC' || err.code === 'EDQUOT') { try { fs.unlinkSync(path); } catch {} }
      return { failed: i, code: err.code, message: err.message };
    }
    start = ends[i];
  }
  return { stats };
}
const answer = run(workerData);
parentPort.postMessage(answer, answer.stats ? [answer.stats.buffer] : []);
`;

/**
 * {@link Storage.writeFiles}: the files written on a worker thread, their bytes copied once into a
 * buffer handed over whole, the stats handed back the same way. The caller's thread goes on
 * meanwhile (a backfill builds its pack); file creation is the kernel's work, so the two overlap
 * even on two cores. A thread is worth starting for many files: the mirror asks from 256.
 */
function writeFilesOffThread(files: readonly WorkTreeFile[], fsync: boolean): Promise<StorageStat[]> {
  let total = 0;
  for (const f of files) total += f.data.length;
  const buffer = new ArrayBuffer(total);
  const bytes = new Uint8Array(buffer);
  const ends = new Float64Array(files.length);
  let at = 0;
  files.forEach((f, i) => {
    bytes.set(f.data, at);
    at += f.data.length;
    ends[i] = at;
  });
  const paths = files.map((f) => f.path);
  return new Promise((resolve, reject) => {
    const worker = new Worker(WRITER, {
      eval: true,
      workerData: { buffer, ends, paths, fsync },
      transferList: [buffer],
    });
    worker.once('message', (m: { stats: BigUint64Array } | { failed: number; code?: string; message: string }) => {
      if ('stats' in m) {
        const n = STAT_FIELDS.length;
        resolve(
          paths.map((_, i) => {
            const f = m.stats.subarray(i * n, (i + 1) * n);
            return new NodeStat({
              mode: f[0]!,
              size: f[1]!,
              ino: f[2]!,
              dev: f[3]!,
              uid: f[4]!,
              gid: f[5]!,
              mtimeNs: f[6]!,
              ctimeNs: f[7]!,
            });
          }),
        );
      } else reject(Object.assign(new Error(m.message), { code: m.code, path: paths[m.failed] }));
    });
    worker.once('error', reject);
    worker.once('exit', (code) =>
      reject(new Error(`the working-tree writer thread exited (${code}) before it answered`)),
    );
  });
}

async function writeDurable(path: string, data: Uint8Array | string, flag: 'w' | 'wx'): Promise<void> {
  const handle = await fsp.open(path, flag, 0o644);
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

/**
 * The Node storage adapter: node:fs, node:crypto and node:zlib; create-exclusive with `wx`; a
 * cross-process lock file per key that a killed holder cannot leave behind for long (its pid is
 * checked on this host, and a holder refreshes the file while it runs).
 */
export function nodeStorage(options: NodeStorageOptions = {}): Storage {
  const opts = Object.freeze({ fsync: false, syncLockTimeoutMs: 60_000, staleMs: 30_000, ...options });
  const host = hostname();
  // Small-file operations run synchronously: a turn makes ~50 of them, and a thread-pool round
  // trip per call cost more than the calls themselves (measured: most of a turn's time was idle
  // waiting). Large writes stay asynchronous so a huge tool output does not stall the event loop.
  const fs: StorageFs = {
    readFile: async (p, o) => fss.readFileSync(p, o as never) as Uint8Array | string,
    writeFile: async (p, d, o) => {
      if (opts.fsync) return writeDurable(p, d, 'w');
      if (d.length > LARGE) return fsp.writeFile(p, d, o as never);
      fss.writeFileSync(p, d, o as never);
    },
    unlink: async (p) => fss.unlinkSync(p),
    readdir: async (p) => fss.readdirSync(p),
    mkdir: async (p, o) => {
      fss.mkdirSync(p, o);
    },
    rmdir: async (p) => fss.rmdirSync(p),
    stat: async (p) => new NodeStat(fss.statSync(p, { bigint: true })),
    lstat: async (p) => new NodeStat(fss.lstatSync(p, { bigint: true })),
    rename: async (a, b) => fss.renameSync(a, b),
    readlink: async (p) => fss.readlinkSync(p),
    symlink: async (t, p) => fss.symlinkSync(t, p),
  };

  async function tryLock(path: string): Promise<boolean> {
    // Not fsynced: a lock only has to outlive its holder's process, not a power cut.
    try {
      fss.writeFileSync(path, JSON.stringify({ pid: process.pid, host, at: Date.now() }), { flag: 'wx' });
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        fss.mkdirSync(dirname(path), { recursive: true });
        return tryLock(path);
      }
      // Its directory is a file: a lock taken by that name (core holds `.git/entity-git` so while it
      // syncs, which keeps out processes that lock `.git/entity-git/sync.lock`): held until it goes.
      if (code === 'ENOTDIR' && fss.lstatSync(dirname(path), { throwIfNoEntry: false })?.isFile()) {
        await takeOverIfGone(dirname(path));
        return false;
      }
      if (code !== 'EEXIST') throw err;
    }
    await takeOverIfGone(path);
    return false;
  }

  /** Someone holds the lock `path`: take it over only if the holder is provably gone. */
  async function takeOverIfGone(path: string): Promise<void> {
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

  return Object.freeze({
    name: DRIVER_NAME,
    fs,
    workTree: true,
    codec: nodeCodec,
    async createExclusive(path: string, data: Uint8Array | string): Promise<boolean> {
      try {
        if (opts.fsync) await writeDurable(path, data, 'wx');
        else fss.writeFileSync(path, data, { flag: 'wx' });
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw err;
      }
    },
    writeFiles: (files: readonly WorkTreeFile[]) => writeFilesOffThread(files, opts.fsync),
    appendFile: async (path: string, data: Uint8Array | string) => fss.appendFileSync(path, data),
    async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
      const out = Buffer.allocUnsafe(Math.max(0, end - start));
      const got = readInto(path, start, out);
      return got === out.length ? out : out.subarray(0, got);
    },
    async readRangeInto(path: string, start: number, target: Uint8Array): Promise<number> {
      return readInto(path, start, target);
    },
    async withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
      const deadline = Date.now() + opts.syncLockTimeoutMs;
      const attempt = async () => {
        try {
          return await tryLock(key);
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
    },
  });
}
