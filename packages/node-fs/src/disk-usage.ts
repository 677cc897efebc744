// What each session repository takes on disk (`entity-git du`), counted as du(1) counts it.
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { listSessionRepositories, type ForeignEntry } from './session-repositories.js';

/** The two sizes du(1) gives of a tree. */
export interface DiskSize {
  /** The sum of the apparent sizes of its entries, directories included (`du -s -b`). */
  bytes: number;
  /** The blocks allocated to them, in bytes (`du -s -B1`): what removing it frees. */
  disk: number;
}

export interface SessionDiskUsage extends DiskSize {
  sessionId: string;
  /** The directory's name under the root. */
  name: string;
  path: string;
}

export interface DiskUsageReport {
  root: string;
  /** Largest (`disk`) first, then by name. */
  sessions: SessionDiskUsage[];
  /** The sessions' sums (the other entries under the root are not counted). */
  total: DiskSize;
  foreign: ForeignEntry[];
}

/**
 * The apparent and allocated size of the tree at `path`, as du(1) counts them: every entry once
 * (a file linked twice counts once), symbolic links not followed, an entry removed meanwhile not
 * counted. `seen` carries the inodes already counted across calls, as du does across its arguments.
 */
export async function treeSize(path: string, seen: Set<string> = new Set()): Promise<DiskSize> {
  const size: DiskSize = { bytes: 0, disk: 0 };
  const stack = [path];
  while (stack.length > 0) {
    const p = stack.pop()!;
    const st = await lstat(p, { bigint: true }).catch(() => null);
    if (st === null) continue;
    const inode = `${st.dev}:${st.ino}`;
    if (seen.has(inode)) continue;
    seen.add(inode);
    size.bytes += Number(st.size);
    size.disk += Number(st.blocks) * 512;
    if (st.isDirectory()) for (const name of await readdir(p).catch(() => [])) stack.push(join(p, name));
  }
  return size;
}

/** The disk each session repository under `root` takes, and their total. */
export async function diskUsage(root: string): Promise<DiskUsageReport> {
  const { repositories, foreign } = await listSessionRepositories(root);
  const seen = new Set<string>();
  const sessions: SessionDiskUsage[] = [];
  for (const r of repositories)
    sessions.push({ sessionId: r.sessionId, name: r.name, path: r.path, ...(await treeSize(r.path, seen)) });
  sessions.sort((a, b) => b.disk - a.disk || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const total = sessions.reduce((t, s) => ({ bytes: t.bytes + s.bytes, disk: t.disk + s.disk }), { bytes: 0, disk: 0 });
  return { root, sessions, total, foreign };
}
