// Retention (docs/design.md, 'Retention and accounting'): the application deletes sessions from
// its DAG, and entity-git follows by removing their repositories, each archived first on request.
import { mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { EntityGitError, sessionDirName, type DagSource } from '@entity-git/core';
import { uniqueSuffix } from '@entity-git/git';
import { bundleRepository } from './bundle.js';
import { treeSize, type DiskSize } from './disk-usage.js';
import { identifySessionRepository, listSessionRepositories, type ForeignEntry } from './session-repositories.js';

/** Where a removal in progress is moved first (a dot name: never a session's directory). */
export const PRUNE_TRASH = '.entity-git-prune';

export interface PruneOptions {
  /** The session root (absolute). */
  root: string;
  /** The DAG whose sessions stay. */
  dag: Pick<DagSource, 'listSessions' | 'getSession'>;
  /** Write each repository as `<dir name>.bundle` in this directory (created) before removing it. Default: none. */
  archive?: string;
  /** Report only: nothing is written or removed. Default false. */
  dryRun?: boolean;
  /**
   * Go on when every repository under the root would go (the DAG holds none of their sessions),
   * which is what a wrong database looks like. Default false: refused with `PRUNE_REFUSED`.
   */
  all?: boolean;
  /** The git binary writing bundles. Default `git` (found on PATH). */
  gitPath?: string;
}

/** A repository pruned (or, in a dry run, that would be). */
export interface PrunedRepository {
  sessionId: string;
  /** Its directory's name under the root, and its path. */
  name: string;
  path: string;
  /** What it took (the `disk` is what its removal freed). */
  size: DiskSize;
  /** The bundle written; null without `archive`, in a dry run, and for a repository without a ref (nothing to keep). */
  archive: string | null;
}

export interface PruneReport {
  root: string;
  dryRun: boolean;
  pruned: PrunedRepository[];
  /** Repositories of sessions the DAG holds: kept. */
  kept: number;
  /** Entries under the root that are not session repositories: never touched. */
  foreign: ForeignEntry[];
}

/**
 * Remove the repositories under `root` whose sessions the DAG no longer holds, each written first
 * as a bundle when `archive` is given. Each is checked again just before it goes (still a session
 * repository, its session still absent: see {@link pruneSessionRepository}), and a removal a crash
 * interrupted is finished first. Throws `PRUNE_REFUSED`, `ARCHIVE_FAILED`, `GIT_NOT_FOUND`.
 */
export async function pruneSessions(options: PruneOptions): Promise<PruneReport> {
  const { root, dag } = options;
  const dryRun = options.dryRun === true;
  if (!dryRun) await emptyTrash(root);
  const { repositories, foreign } = await listSessionRepositories(root);
  const live = new Set(await dag.listSessions());
  const gone = repositories.filter((r) => !live.has(r.sessionId));
  if (gone.length > 0 && gone.length === repositories.length && options.all !== true)
    throw new EntityGitError(
      'PRUNE_REFUSED',
      `the DAG holds none of the ${gone.length} sessions under ${root}: is it the right database? (pass all to remove them all)`,
      { root, repositories: gone.length },
    );
  const pruned: PrunedRepository[] = [];
  for (const r of gone) {
    if (dryRun) pruned.push({ ...r, size: await treeSize(r.path), archive: null });
    else pruned.push(await pruneSessionRepository({ ...options, sessionId: r.sessionId }));
  }
  return { root, dryRun, pruned, kept: repositories.length - gone.length, foreign };
}

export interface PruneSessionOptions extends Pick<PruneOptions, 'root' | 'dag' | 'archive' | 'gitPath'> {
  sessionId: string;
}

/**
 * Remove one session's repository, archived first when `archive` is given: written as a bundle,
 * checked to hold every ref, flushed, and only then the repository moved aside and removed, so a
 * crash loses nothing (at worst a bundle and a repository both stay, or a moved-aside copy that
 * the next prune removes). Refused, with nothing touched, when the directory is not that session's
 * repository (`NOT_SESSION_REPOSITORY`) or the DAG still holds the session (`SESSION_IN_DAG`).
 */
export async function pruneSessionRepository(options: PruneSessionOptions): Promise<PrunedRepository> {
  const { root, dag, sessionId } = options;
  const name = sessionDirName(sessionId);
  const path = join(root, name);
  const found = await identifySessionRepository(path);
  if (found !== sessionId)
    throw new EntityGitError('NOT_SESSION_REPOSITORY', `${path} mirrors ${JSON.stringify(found)}`, { path, sessionId });
  if ((await dag.getSession(sessionId)) !== null)
    throw new EntityGitError('SESSION_IN_DAG', `session ${JSON.stringify(sessionId)} is still in the DAG: kept`, {
      sessionId,
      path,
    });
  const size = await treeSize(path);
  const archive =
    options.archive === undefined
      ? null
      : await bundleRepository({ repo: path, dir: options.archive, name, gitPath: options.gitPath ?? 'git' });
  const trash = join(root, PRUNE_TRASH);
  await mkdir(trash, { recursive: true });
  const aside = join(trash, `${name}.${uniqueSuffix()}`);
  // One rename takes the whole repository out of the root: a reader or a crash sees it whole or gone.
  await rename(path, aside);
  await rm(aside, { recursive: true, force: true });
  // Left empty, the trash goes too: a root then holds only what it held (another prune's, still
  // in use, makes this fail, which is fine).
  await rmdir(trash).catch(() => undefined);
  return { sessionId, name, path, size, archive };
}

/** Finish the removals a crash interrupted: what is in the trash was archived (if asked) before it moved there. */
async function emptyTrash(root: string): Promise<void> {
  const trash = join(root, PRUNE_TRASH);
  const left = await readdir(trash).catch(() => []);
  for (const name of left) await rm(join(trash, name), { recursive: true, force: true });
  await rmdir(trash).catch(() => undefined);
}
