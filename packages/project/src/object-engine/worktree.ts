import { EntityGitError, type StorageStat, joinPath, utf8 } from '@entity-git/git';
import type { FileState, RepoState } from '../project-git-engine.js';
import { OBJECT_ENGINE, type EngineContext } from './context.js';
import type { Discovery } from './discovery.js';

export const MODE_FILE = 0o100644;
export const MODE_EXEC = 0o100755;
export const MODE_LINK = 0o120000;
export const MODE_GITLINK = 0o160000;

export function modeOf(st: StorageStat, fileMode: boolean, indexMode: number | undefined): number {
  if (st.isSymbolicLink()) return MODE_LINK;
  if (!fileMode && indexMode !== undefined && (indexMode === MODE_FILE || indexMode === MODE_EXEC)) return indexMode;
  return st.mode & 0o111 ? MODE_EXEC : MODE_FILE;
}

/** Working-tree files as git would record them: blob id and mode. */
export function worktree(ctx: EngineContext, { fileModeOf }: Discovery) {
  const { store, fs, blobOid } = ctx;

  async function worktreeOid(full: string, st: StorageStat): Promise<string | null> {
    if (st.isSymbolicLink()) {
      if (!fs.readlink) return null;
      return blobOid(utf8(await fs.readlink(full)));
    }
    if (!st.isFile()) return null;
    const data = await store.read(full);
    return data === null ? null : blobOid(data);
  }

  async function hashPaths(repo: RepoState, paths: readonly string[]): Promise<FileState[]> {
    const fileMode = await fileModeOf(repo);
    const out: FileState[] = [];
    for (const path of paths) out.push((await capture(repo.root, path, fileMode, undefined)).state);
    return out;
  }

  /** A path's content as git would record it, with the stat taken before reading it (so a later write shows as a change). */
  async function capture(
    root: string,
    path: string,
    fileMode: boolean,
    indexMode: number | undefined,
  ): Promise<{ state: FileState; st: StorageStat | null; data: Uint8Array | null }> {
    const full = joinPath(root, path);
    const st = await store.lstat(full);
    if (st === null || !(st.isFile() || st.isSymbolicLink()))
      return { state: { path, oid: null, mode: null }, st: null, data: null };
    if (st.isSymbolicLink() && !fs.readlink) {
      // Recording it as absent would commit its removal.
      throw new EntityGitError(
        'PROJECT_GIT_ERROR',
        `[${OBJECT_ENGINE}] ${full} is a symbolic link and this file system cannot read links`,
        { path: full },
      );
    }
    const data = st.isSymbolicLink() ? utf8(await fs.readlink!(full)) : await store.read(full);
    if (data === null) return { state: { path, oid: null, mode: null }, st: null, data: null };
    return { state: { path, oid: blobOid(data), mode: modeOf(st, fileMode, indexMode).toString(8) }, st, data };
  }

  return { worktreeOid, hashPaths, capture };
}

export type Worktree = ReturnType<typeof worktree>;
