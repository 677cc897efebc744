import { objectId, joinPath, type Store } from '@entity-git/git';
import type { HostYield } from './host-yield.js';
import type { Difference } from './mirror.js';

/**
 * The working tree of a session repository against the files HEAD's tree holds. The working tree
 * belongs to the mirror (`git status` clean is a promise): `meta.json` and everything under
 * `messages/` must be exactly HEAD's — present, the same bytes, nothing else. Files elsewhere are
 * not the mirror's and are not looked at.
 */
export interface WorktreeDamage {
  /** In HEAD's tree, absent from the working tree. */
  missing: string[];
  /** Present with other bytes (or not a regular file). */
  changed: string[];
  /** Under `messages/` (or `meta.json`) with no place in HEAD's tree. */
  extra: string[];
}

/**
 * Every file `meta.json` and under `messages/` of the working tree at `dir`, as repository paths.
 * Paths in `files` are taken for files without a stat (a backfill's thousands of message files
 * cost one directory listing, not a stat each). `host`: gives the event loop turns meanwhile.
 */
export async function mirrorFiles(
  store: Store,
  dir: string,
  files: ReadonlyMap<string, unknown> = new Map(),
  host?: HostYield,
): Promise<string[]> {
  const out: string[] = [];
  if ((await store.lstat(joinPath(dir, 'meta.json'))) !== null) out.push('meta.json');
  const walk = async (rel: string): Promise<void> => {
    const names = await store.readdir(joinPath(dir, rel));
    await host?.due();
    names.sort();
    for (const name of names) {
      if (out.length % 256 === 255) await host?.due();
      const path = `${rel}/${name}`;
      if (files.has(path)) {
        out.push(path);
        continue;
      }
      const st = await store.lstat(joinPath(dir, path));
      if (st === null) continue;
      if (st.isDirectory()) await walk(path);
      else out.push(path);
    }
  };
  await walk('messages');
  return out;
}

/**
 * How the working tree at `dir` differs from `target` (path → blob id); all lists empty when it
 * does not. `host`: gives the event loop turns meanwhile.
 */
export async function worktreeDamage(
  store: Store,
  dir: string,
  target: ReadonlyMap<string, string>,
  host?: HostYield,
): Promise<WorktreeDamage> {
  const damage: WorktreeDamage = { missing: [], changed: [], extra: [] };
  for (const [path, oid] of target) {
    await host?.due();
    const st = await store.lstat(joinPath(dir, path));
    if (st === null) damage.missing.push(path);
    else if (!st.isFile()) damage.changed.push(path);
    else {
      const bytes = await store.read(joinPath(dir, path));
      if (bytes === null) damage.missing.push(path);
      else if (objectId(store.codec, 'blob', bytes) !== oid) damage.changed.push(path);
    }
  }
  for (const path of await mirrorFiles(store, dir, undefined, host)) if (!target.has(path)) damage.extra.push(path);
  return damage;
}

export const worktreeDamaged = (d: WorktreeDamage): boolean => d.missing.length + d.changed.length + d.extra.length > 0;

/** Verify's differences for `damage` on branch `head`. */
export function worktreeDifferences(damage: WorktreeDamage, head: string, dir: string): Difference[] {
  const out: Difference[] = [];
  const list = (paths: string[]) =>
    paths.length > 5 ? `${paths.slice(0, 5).join(', ')} and ${paths.length - 5} more` : paths.join(', ');
  if (damage.missing.length > 0)
    out.push({
      kind: 'worktree-differs',
      branch: head,
      detail: `the working tree of ${dir} lacks ${list(damage.missing)} of ${head}`,
    });
  if (damage.changed.length > 0)
    out.push({
      kind: 'worktree-differs',
      branch: head,
      detail: `the working tree of ${dir} holds other bytes in ${list(damage.changed)} than ${head}`,
    });
  if (damage.extra.length > 0)
    out.push({
      kind: 'worktree-differs',
      branch: head,
      detail: `the working tree of ${dir} holds ${list(damage.extra)}, which ${head} does not have`,
    });
  return out;
}
