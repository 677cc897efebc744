import type { StorageFs, StorageStat } from '@entity-git/git';
import { codeError } from './errors.js';
import { statKey, type FileMemory } from './file-memory.js';
import type { LightningPromises } from './lightning-fs.js';

export const encoder = new TextEncoder();
export const decoder = new TextDecoder();
export const utf8 = (text: string) => encoder.encode(text);
export const fromUtf8 = (bytes: Uint8Array) => decoder.decode(bytes);

export function dirOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

/** Typed arrays that are views into a larger buffer would be stored whole by IndexedDB. */
export function exact(data: Uint8Array | string): Uint8Array | string {
  if (typeof data === 'string') return data;
  return data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && data.constructor === Uint8Array
    ? data
    : new Uint8Array(data);
}

/** One file system operation of a storage: refused once it is closed, counted, its errors made typed. */
export type RunOperation = <T>(op: string, path: string, fn: () => Promise<T>) => Promise<T>;

/**
 * The {@link StorageFs} of a browser storage: LightningFS `p` with Node's answers where they
 * differ (ENOTDIR, EISDIR), reads answered from `memory` where it can, writes through it.
 * `parentIsDir` is for the storage's own writes.
 */
export function lightningStorageFs(
  p: LightningPromises,
  memory: FileMemory,
  run: RunOperation,
): { fs: StorageFs; parentIsDir(path: string): Promise<void> } {
  const parentIsDir = (path: string) => parentIsDirIn(p, path);
  const fs: StorageFs = {
    readFile: (path, o) => run('read', path, () => readFile(p, memory, path, o)),
    writeFile: (path, data, o) =>
      run('write', path, async () => {
        await parentIsDir(path);
        const bytes = typeof data === 'string' ? utf8(data) : (exact(data) as Uint8Array);
        // A copy is remembered: the caller may reuse its buffer.
        await memory.writeKnown(path, bytes, bytes === data ? bytes.slice() : bytes, o);
      }),
    unlink: (path) =>
      run('unlink', path, async () => {
        memory.forget(path);
        const st = await p.lstat(path);
        if (st.isDirectory()) throw codeError('EISDIR', path);
        memory.dropPending(st.ino);
        await p.unlink(path);
      }),
    readdir: (path) => run('readdir', path, () => p.readdir(path)),
    mkdir: (path, o) =>
      run('mkdir', path, async () => {
        await parentIsDir(path);
        await p.mkdir(path, o);
      }),
    rmdir: (path) => run('rmdir', path, () => p.rmdir(path)),
    stat: (path) => run('stat', path, () => p.stat(path) as Promise<StorageStat>),
    lstat: (path) => run('stat', path, () => p.lstat(path) as Promise<StorageStat>),
    rename: (from, to) => run('rename', from, () => rename(p, memory, from, to)),
    readlink: (path) => run('readlink', path, () => p.readlink(path)),
    symlink: (target, path) => run('symlink', path, () => p.symlink(target, path)),
  };
  return { fs, parentIsDir };
}

// LightningFS would add a child to a *file* whose path is used as a directory; Node says ENOTDIR.
async function parentIsDirIn(p: LightningPromises, path: string): Promise<void> {
  const parent = dirOf(path);
  if (parent === '/') return;
  let st;
  try {
    st = await p.lstat(parent);
  } catch (err) {
    // A missing parent (or one above it): ENOENT, as LightningFS would say after trying.
    if ((err as { code?: string }).code === 'ENOENT') throw codeError('ENOENT', path);
    return;
  }
  if (!st.isDirectory()) throw codeError('ENOTDIR', path);
}

const asText = (o: Parameters<StorageFs['readFile']>[1]) =>
  o === 'utf8' || (typeof o === 'object' && o?.encoding === 'utf8');

async function readFile(
  p: LightningPromises,
  memory: FileMemory,
  path: string,
  o: Parameters<StorageFs['readFile']>[1],
): Promise<Uint8Array | string> {
  // The stat is in memory: a missing file is known without asking IndexedDB for its bytes.
  const st = await p.lstat(path).catch((err: { code?: string }) => {
    if (err?.code === 'ENOENT' || err?.code === 'ENOTDIR') throw err;
    return null;
  });
  const hit = st === null ? undefined : memory.bytesAt(path, st);
  if (hit !== undefined) return asText(o) ? fromUtf8(hit) : hit.slice();
  const data = (await p.readFile(path)) as Uint8Array | null | undefined;
  if (data === undefined || data === null) {
    // The tree lists the file but its data never reached IndexedDB (reload in between).
    memory.forget(path);
    return asText(o) ? '' : new Uint8Array(0);
  }
  if (st?.isFile() && !memory.isWriting(path) && data.byteLength === st.size)
    memory.remember(path, statKey(st), data.slice());
  return asText(o) ? fromUtf8(data) : data;
}

async function rename(p: LightningPromises, memory: FileMemory, from: string, to: string): Promise<void> {
  await parentIsDirIn(p, to);
  const moved = memory.knownAt(from);
  memory.forget(from);
  memory.forget(to);
  // A file renamed over is gone from the tree: bytes still held for it are not written.
  const over = await p.lstat(to).catch(() => null);
  if (over?.isFile()) {
    const src = await p.lstat(from).catch(() => null);
    if (src === null || src.ino !== over.ino) memory.dropPending(over.ino);
  }
  await p.rename(from, to);
  // LightningFS moves the file's entry, stat and all: what was known of it still holds.
  if (moved !== undefined && !memory.isWriting(from) && !memory.isWriting(to))
    memory.remember(to, moved.key, moved.data);
}
