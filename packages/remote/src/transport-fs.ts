import { EntityGitError, type StorageFs, type Store, utf8 } from '@entity-git/git';
import type { PromiseFsClient } from 'isomorphic-git';

/**
 * The file system isomorphic-git sees during push and fetch: reads pass through; writes are
 * allowed only for objects (packs), remote-tracking refs and `shallow`, each through a temp file
 * and a rename. Local branches, HEAD, the index and the reflogs are the repository layer's
 * (RefStore, under the session lock): a write there is refused, so isomorphic-git can never move
 * them behind `<ref>.lock`'s back.
 */
export function transportFs(
  store: Store,
  repo: { gitdir: string },
): PromiseFsClient & { promises: Required<StorageFs> } {
  const base = store.fs;
  const rel = (path: string) => (path.startsWith(`${repo.gitdir}/`) ? path.slice(repo.gitdir.length + 1) : null);
  const writable = (path: string) => {
    const r = rel(path);
    return (
      r !== null && !r.includes('..') && (r.startsWith('objects/') || r.startsWith('refs/remotes/') || r === 'shallow')
    );
  };
  const refuse = (op: string, path: string): never => {
    throw new EntityGitError(
      'STORAGE_ERROR',
      `[${store.name}] the git transport may not ${op} ${path}: only objects and remote-tracking refs are written outside the ref locks`,
      { op, path },
    );
  };
  const promises: Required<StorageFs> = {
    readFile: (p, o) => base.readFile(p, o),
    stat: (p) => base.stat(p),
    lstat: (p) => base.lstat(p),
    readdir: (p) => base.readdir(p),
    readlink: (p) =>
      base.readlink ? base.readlink(p) : Promise.reject(Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' })),
    async writeFile(p: string, data: Uint8Array | string) {
      if (!writable(p)) refuse('write', p);
      await store.writeAtomic(p, typeof data === 'string' ? utf8(data) : data);
    },
    async mkdir(p: string) {
      if (!writable(`${p}/x`)) refuse('create directory', p);
      await base.mkdir(p);
    },
    async unlink(p: string) {
      if (!writable(p)) refuse('delete', p);
      await base.unlink(p);
    },
    async rmdir(p: string) {
      refuse('remove directory', p);
    },
    async rename(a: string, b: string) {
      if (!writable(a) || !writable(b)) refuse('rename', b);
      await base.rename(a, b);
    },
    async symlink(_t: string, p: string) {
      refuse('symlink', p);
    },
  };
  return { promises };
}
