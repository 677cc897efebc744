import { createHash } from 'node:crypto';
import { hostname, homedir } from 'node:os';
import * as fsp from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';
import { EntityGitError, type Codec, type Storage, type StorageFs, type StorageStat } from '@entity-git/core';

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

export const nodeCodec: Codec = Object.freeze({
  sha1: (data: Uint8Array) => createHash('sha1').update(data).digest('hex'),
  deflate: (data: Uint8Array) => deflateSync(data),
  inflate: (data: Uint8Array) => inflateSync(data),
});

class NodeStat implements StorageStat {
  mode: number; size: number; ino: number; dev: number; uid: number; gid: number;
  mtimeMs: number; ctimeMs: number; mtimeNs: bigint; ctimeNs: bigint;
  private readonly kind: 'file' | 'dir' | 'link' | 'other';
  constructor(s: import('node:fs').BigIntStats) {
    this.mode = Number(s.mode); this.size = Number(s.size); this.ino = Number(s.ino); this.dev = Number(s.dev);
    this.uid = Number(s.uid); this.gid = Number(s.gid);
    this.mtimeMs = Number(s.mtimeMs); this.ctimeMs = Number(s.ctimeMs); this.mtimeNs = s.mtimeNs; this.ctimeNs = s.ctimeNs;
    this.kind = s.isFile() ? 'file' : s.isDirectory() ? 'dir' : s.isSymbolicLink() ? 'link' : 'other';
  }
  isFile(): boolean { return this.kind === 'file'; }
  isDirectory(): boolean { return this.kind === 'dir'; }
  isSymbolicLink(): boolean { return this.kind === 'link'; }
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

/**
 * The Node storage adapter: node:fs, node:crypto and node:zlib; create-exclusive with `wx`; a
 * cross-process lock file per key that a killed holder cannot leave behind for long (its pid is
 * checked on this host, and a holder refreshes the file while it runs).
 */
export function nodeStorage(options: NodeStorageOptions = {}): Storage {
  const opts = Object.freeze({ fsync: false, syncLockTimeoutMs: 60_000, staleMs: 30_000, ...options });
  const host = hostname();
  const fs: StorageFs = {
    readFile: (p, o) => fsp.readFile(p, o as never) as Promise<Uint8Array | string>,
    writeFile: (p, d, o) => (opts.fsync ? writeDurable(p, d, 'w') : fsp.writeFile(p, d, o as never)),
    unlink: (p) => fsp.unlink(p),
    readdir: (p) => fsp.readdir(p),
    mkdir: async (p, o) => {
      await fsp.mkdir(p, o);
    },
    rmdir: (p) => fsp.rmdir(p),
    stat: async (p) => new NodeStat(await fsp.stat(p, { bigint: true })),
    lstat: async (p) => new NodeStat(await fsp.lstat(p, { bigint: true })),
    rename: (a, b) => fsp.rename(a, b),
    readlink: (p) => fsp.readlink(p),
    symlink: (t, p) => fsp.symlink(t, p),
  };

  async function tryLock(path: string): Promise<boolean> {
    try {
      await writeDurable(path, JSON.stringify({ pid: process.pid, host, at: Date.now() }), 'wx');
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    // Someone holds it: take it over only if the holder is provably gone.
    try {
      const [text, st] = await Promise.all([fsp.readFile(path, 'utf8'), fsp.stat(path)]);
      let holder: { pid?: number; host?: string } = {};
      try {
        holder = JSON.parse(text) as typeof holder;
      } catch {
        // half-written by a holder killed while creating it: judged by age alone
      }
      const dead = holder.host === host && typeof holder.pid === 'number' && holder.pid !== process.pid && !alive(holder.pid);
      if (dead || Date.now() - st.mtimeMs > opts.staleMs) {
        const grave = `${path}.stale-${process.pid}-${Date.now()}`;
        await fsp.rename(path, grave);
        await fsp.unlink(grave);
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return false;
  }

  return Object.freeze({
    name: DRIVER_NAME,
    fs,
    workTree: true,
    codec: nodeCodec,
    async createExclusive(path: string, data: Uint8Array | string): Promise<boolean> {
      try {
        if (opts.fsync) await writeDurable(path, data, 'wx');
        else await fsp.writeFile(path, data, { flag: 'wx' });
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw err;
      }
    },
    appendFile: (path: string, data: Uint8Array | string) => fsp.appendFile(path, data),
    async withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
      await fsp.mkdir(dirname(key), { recursive: true });
      const deadline = Date.now() + opts.syncLockTimeoutMs;
      for (let wait = 5; !(await tryLock(key)); wait = Math.min(wait * 2, 200)) {
        if (Date.now() > deadline) throw new EntityGitError('LOCK_TIMEOUT', `[${DRIVER_NAME}] ${key} is held by another process`, { lock: key });
        await sleep(wait + Math.random() * wait);
      }
      const refresh = setInterval(() => {
        const now = new Date();
        fsp.utimes(key, now, now).catch(() => undefined);
      }, Math.max(50, opts.staleMs / 3));
      refresh.unref();
      try {
        return await fn();
      } finally {
        clearInterval(refresh);
        await fsp.unlink(key).catch(() => undefined);
      }
    },
  });
}
