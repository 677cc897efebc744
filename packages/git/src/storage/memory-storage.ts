import type { Storage, StorageFs, StorageStat } from './storage.js';

/** The name of {@link memoryStorage}. */
export const MEMORY_STORAGE = 'memory';

const fsError = (code: string, op: string, path: string) =>
  Object.assign(new Error(`${code}: ${op} ${path}`), { code });
const parentOf = (path: string) => path.slice(0, Math.max(1, path.lastIndexOf('/')));

/**
 * A storage that keeps its files in memory and forgets them when dropped: objects and refs only,
 * no working tree. `verify` builds the commits a fresh backfill would write into one, to compare
 * their ids with the repository's; a test or a tool may use it the same way.
 */
export function memoryStorage(): Storage {
  const files = new Map<string, Uint8Array>();
  const dirs = new Set<string>(['/']);
  let ino = 0;
  const inos = new Map<string, number>();
  const stat = (path: string): StorageStat => {
    const file = files.get(path);
    if (file === undefined && !dirs.has(path)) throw fsError('ENOENT', 'stat', path);
    if (!inos.has(path)) inos.set(path, ++ino);
    const isDir = file === undefined;
    return {
      mode: isDir ? 0o40755 : 0o100644,
      size: file?.length ?? 0,
      ino: inos.get(path)!,
      mtimeMs: 0,
      isFile: () => !isDir,
      isDirectory: () => isDir,
      isSymbolicLink: () => false,
    };
  };
  const needParent = (path: string, op: string) => {
    if (!dirs.has(parentOf(path))) throw fsError('ENOENT', op, path);
  };
  const fs: StorageFs = {
    async readFile(path, options) {
      const file = files.get(path);
      if (file === undefined) throw fsError(dirs.has(path) ? 'EISDIR' : 'ENOENT', 'read', path);
      const utf8 = options === 'utf8' || (typeof options === 'object' && options?.encoding === 'utf8');
      return utf8 ? new TextDecoder().decode(file) : file.slice();
    },
    async writeFile(path, data) {
      needParent(path, 'write');
      if (dirs.has(path)) throw fsError('EISDIR', 'write', path);
      files.set(path, typeof data === 'string' ? new TextEncoder().encode(data) : data.slice());
      inos.delete(path);
    },
    async unlink(path) {
      if (!files.delete(path)) throw fsError('ENOENT', 'unlink', path);
    },
    async readdir(path) {
      if (!dirs.has(path)) throw fsError('ENOENT', 'readdir', path);
      const prefix = path === '/' ? '/' : `${path}/`;
      const names = new Set<string>();
      for (const p of [...files.keys(), ...dirs])
        if (p.startsWith(prefix) && p !== path && !p.slice(prefix.length).includes('/'))
          names.add(p.slice(prefix.length));
      return [...names].sort();
    },
    async mkdir(path) {
      if (dirs.has(path) || files.has(path)) throw fsError('EEXIST', 'mkdir', path);
      needParent(path, 'mkdir');
      dirs.add(path);
    },
    async rmdir(path) {
      if (!dirs.has(path)) throw fsError('ENOENT', 'rmdir', path);
      if ((await fs.readdir(path)).length > 0) throw fsError('ENOTEMPTY', 'rmdir', path);
      dirs.delete(path);
    },
    stat: async (path) => stat(path),
    lstat: async (path) => stat(path),
    async rename(from, to) {
      const file = files.get(from);
      if (file === undefined) throw fsError('ENOENT', 'rename', from);
      needParent(to, 'rename');
      files.delete(from);
      files.set(to, file);
      inos.delete(to);
    },
  };
  return { name: MEMORY_STORAGE, fs };
}
