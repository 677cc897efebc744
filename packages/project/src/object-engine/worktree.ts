import type { StorageStat } from '@entity-git/git';

export const MODE_FILE = 0o100644;
export const MODE_EXEC = 0o100755;
export const MODE_LINK = 0o120000;
export const MODE_GITLINK = 0o160000;

/** The mode git records for a file: a link, else the index's when `core.filemode` is off, else from its owner's executable bit (as git: a group's or others' bit alone is no executable). */
export function modeOf(st: StorageStat, fileMode: boolean, indexMode: number | undefined): number {
  if (st.isSymbolicLink()) return MODE_LINK;
  if (!fileMode && indexMode !== undefined && (indexMode === MODE_FILE || indexMode === MODE_EXEC)) return indexMode;
  return st.mode & 0o100 ? MODE_EXEC : MODE_FILE;
}
