// Which directories under a session root are session repositories entity-git wrote, and whose:
// what retention (prune, du) may count and remove (docs/design.md, 'Retention and accounting').
import { lstat, readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { EntityGitError, META_REF, sessionDirName } from '@entity-git/core';
import { ObjectStore, RefStore, fromUtf8, parseCommit, parseTree, storeFor, type Store } from '@entity-git/git';
import { nodeStorage } from './node-storage.js';

/** A session repository found under the root. */
export interface SessionRepository {
  /** Its directory's name under the root: the session id escaped (docs/design.md, 'The session repository'). */
  name: string;
  /** Its absolute path. */
  path: string;
  /** The session it mirrors, as its own objects record it. */
  sessionId: string;
}

/** An entry under the root that is not a session repository: never counted, never removed. */
export interface ForeignEntry {
  name: string;
  /** Why it is not one, for people. */
  reason: string;
}

export interface SessionRepositories {
  repositories: SessionRepository[];
  foreign: ForeignEntry[];
}

/**
 * The directory names entity-git keeps at a root for itself: escaped session ids never start with
 * a dot (a leading dot is escaped), so a dot name is never a session's and is passed over in silence.
 */
const isOwnName = (name: string) => name.startsWith('.');

const notOne = (path: string, reason: string): never => {
  throw new EntityGitError('NOT_SESSION_REPOSITORY', `${path} is not an entity-git session repository: ${reason}`, {
    path,
    reason,
  });
};

/**
 * The session id a directory's repository mirrors, after checking that it is one entity-git wrote:
 * a real directory (no symbolic link) holding a `.git` directory whose config has entity-git's
 * section, whose meta ref (or else HEAD's `meta.json`) names a session, and
 * whose directory name is that session's. Throws `NOT_SESSION_REPOSITORY` (`data.reason`) otherwise.
 */
export async function identifySessionRepository(path: string): Promise<string> {
  const self = await lstat(path).catch(() => null);
  if (self === null) notOne(path, 'it does not exist');
  if (!self!.isDirectory()) notOne(path, self!.isSymbolicLink() ? 'it is a symbolic link' : 'it is not a directory');
  const gitdir = join(path, '.git');
  const dotGit = await lstat(gitdir).catch(() => null);
  if (dotGit === null || !dotGit.isDirectory()) notOne(path, 'it has no .git directory');
  const store = storeFor(nodeStorage());
  const config = await store.readText(join(gitdir, 'config')).catch(() => null);
  if (config === null || !/^\s*\[entitygit\]/im.test(config)) notOne(path, 'its git config has no [entitygit] section');
  const id = await recordedSessionId(store, gitdir).catch(() => null);
  if (id === null) notOne(path, 'no meta ref nor meta.json names its session');
  if (sessionDirName(id!) !== basename(path))
    notOne(path, `it mirrors session ${JSON.stringify(id)}, whose directory has another name`);
  return id!;
}

/** The id the meta ref's `session.json` holds, or HEAD's `meta.json`; null when neither does. */
async function recordedSessionId(store: Store, gitdir: string): Promise<string | null> {
  // Read only: a lock is never waited for, and never taken over.
  const refs = new RefStore(store, gitdir, { timeoutMs: 0, staleMs: Number.POSITIVE_INFINITY });
  const objects = new ObjectStore(store, gitdir);
  const idIn = async (commit: string | null, file: string): Promise<string | null> => {
    if (commit === null) return null;
    const tree = parseCommit(await objects.readTyped(commit, 'commit')).tree;
    const entry = parseTree(await objects.readTyped(tree, 'tree')).find((e) => e.name === file);
    if (entry === undefined) return null;
    const value = JSON.parse(fromUtf8(await objects.readTyped(entry.oid, 'blob'))) as { id?: unknown };
    return typeof value?.id === 'string' ? value.id : null;
  };
  return (
    (await idIn(await refs.resolve(META_REF), 'session.json')) ?? (await idIn(await refs.resolve('HEAD'), 'meta.json'))
  );
}

/**
 * Every session repository directly under `root`, by name, and the other entries (files, other
 * repositories, directories of anything else) with the reason each is not one. entity-git's own
 * dot names are left out of both. A missing root holds none.
 */
export async function listSessionRepositories(root: string): Promise<SessionRepositories> {
  const names = await readdir(root).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  const repositories: SessionRepository[] = [];
  const foreign: ForeignEntry[] = [];
  for (const name of names.sort()) {
    if (isOwnName(name)) continue;
    const path = join(root, name);
    try {
      repositories.push({ name, path, sessionId: await identifySessionRepository(path) });
    } catch (err) {
      if (!(err instanceof EntityGitError) || err.code !== 'NOT_SESSION_REPOSITORY') throw err;
      foreign.push({ name, reason: String(err.data.reason) });
    }
  }
  return { repositories, foreign };
}
