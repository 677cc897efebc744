// A Storage over node:fs/promises alone, for the shadow snapshot written in-process: the storage
// of @entity-git/node-fs makes its small-file calls synchronously (cheaper for a sync's dozens of
// them), but a snapshot runs inside the host's turn, and its file system work must leave the event
// loop free (docs/design.md §7, "When a snapshot trusts the watcher").
import * as fsp from 'node:fs/promises';
import type { Storage, StorageFs } from '@entity-git/git';
import { nodeCodec } from '@entity-git/node-fs';

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

const fileSystem: StorageFs = {
  readFile: (p, o) => fsp.readFile(p, o as never) as Promise<Uint8Array | string>,
  writeFile: (p, d, o) =>
    fsp.writeFile(p, d, typeof o === 'string' ? { encoding: o, mode: FILE_MODE } : { mode: o?.mode ?? FILE_MODE }),
  unlink: (p) => fsp.unlink(p),
  readdir: (p) => fsp.readdir(p),
  mkdir: async (p, o) => {
    await fsp.mkdir(p, { mode: o?.mode ?? DIR_MODE });
  },
  rmdir: (p) => fsp.rmdir(p),
  stat: (p) => fsp.stat(p),
  lstat: (p) => fsp.lstat(p),
  rename: (a, b) => fsp.rename(a, b),
  readlink: (p) => fsp.readlink(p),
};

async function readInto(path: string, start: number, target: Uint8Array): Promise<number> {
  const handle = await fsp.open(path, 'r');
  try {
    let got = 0;
    while (got < target.length) {
      const { bytesRead } = await handle.read(target, got, target.length - got, start + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return got;
  } finally {
    await handle.close();
  }
}

/** Loose objects, refs and packs of a shadow repository, read and written without blocking the loop. */
export const asyncNodeStorage: Storage = Object.freeze({
  name: 'node-fs (async)',
  fs: fileSystem,
  codec: nodeCodec,
  async createExclusive(path: string, data: Uint8Array | string): Promise<boolean> {
    try {
      await fsp.writeFile(path, data, { flag: 'wx', mode: FILE_MODE });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  },
  appendFile: (path: string, data: Uint8Array | string) => fsp.appendFile(path, data, { mode: FILE_MODE }),
  async readRange(path: string, start: number, end: number): Promise<Uint8Array> {
    const out = Buffer.allocUnsafe(Math.max(0, end - start));
    const got = await readInto(path, start, out);
    return got === out.length ? out : out.subarray(0, got);
  },
  readRangeInto: readInto,
});
