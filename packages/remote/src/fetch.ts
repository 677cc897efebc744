import { DEFAULT_IDENTITY } from '@entity-git/core';
import { CORE_CONFIG, createRepo, repoExists, withRepoLock } from '@entity-git/core/repository';
import { EntityGitError } from '@entity-git/git';
import { advertisedRefs } from './advertise.js';
import { download } from './fetch-download.js';
import { blankResult, settle } from './fetch-settle.js';
import type { Advertised, Connected, FetchOptions, FetchResult, Prepared } from './fetch-types.js';
import { ensureRemoteConfig } from './remote-config.js';
import { openTarget, withRemoteLock } from './target.js';

/**
 * Bring a session's repository up to date with the host. isomorphic-git downloads the objects
 * (a pack) and writes the remote-tracking refs `refs/remotes/<name>/*` — nothing else (its file
 * system view refuses other writes). Then, holding the mirror's session lock, the local
 * branches are moved through the repository layer's RefStore (`<ref>.lock`, old-value check,
 * reflog): a branch the host has and this repository lacks is created, one that is behind is
 * fast-forwarded, one that is ahead is kept, one that diverged is kept unless `force`. HEAD
 * follows the host's HEAD record per `head`; on storages with a working tree, the tree and index
 * are checked out.
 *
 * The phases, each handing the next one value: connect (the target opened) → advertise (the
 * host's refs, under the remote lock) → prepare (the repository made as a sync makes it, the
 * remote named in its config) → download (the missing objects) → settle (under the sync lock:
 * branches, meta ref, HEAD, the config a sync records, the working tree). A repository a fetch
 * makes is the one a sync of the same history would have made.
 *
 * Afterwards the mirror's next sync sees the new tips, keeps every commit that matches the DAG
 * and writes what the DAG has beyond them — the DAG stays the source of truth.
 */
export async function fetchSession(options: FetchOptions): Promise<FetchResult> {
  const connected = await connect(options);
  const { ctx, repo } = connected.target;
  return withRemoteLock(connected.target, async () => {
    const advertised = await advertise(connected);
    if (advertised.heads.length === 0) return emptyResult(connected);
    const downloaded = await download(await prepare(advertised));
    return withRepoLock(ctx.store, repo.gitdir, 'sync.lock', () => settle(downloaded));
  });
}

/** Open the target; `SESSION_NOT_FOUND` when the session has no repository and `create` is not set. */
async function connect(options: FetchOptions): Promise<Connected> {
  const target = openTarget(options, options.sessionId);
  if (!options.create && !(await repoExists(target.ctx, target.repo))) {
    throw new EntityGitError(
      'SESSION_NOT_FOUND',
      `session ${JSON.stringify(target.sessionId)} has no repository at ${target.repo.dir} to fetch into`,
      { sessionId: target.sessionId },
    );
  }
  return { target, options, identity: options.identity ?? DEFAULT_IDENTITY };
}

/** The host's refs; its branches `main` first. */
async function advertise(c: Connected): Promise<Advertised> {
  const advertised = await advertisedRefs(c.target, 'fetch');
  const heads = [...advertised.keys()]
    .filter((r) => r.startsWith('refs/heads/'))
    .sort((a, b) => (a === 'refs/heads/main' ? -1 : b === 'refs/heads/main' ? 1 : a < b ? -1 : 1));
  return { ...c, advertised, heads };
}

/**
 * Make the repository when there is none, under the sync lock (a sync may be making it too), as a
 * sync makes one but with git's core config alone: its layout and format are known once its
 * objects are there (settle). Then name the remote in its config: isomorphic-git maps the host's
 * refs through `remote.<name>.fetch`.
 */
async function prepare(a: Advertised): Promise<Prepared> {
  const { ctx, repo, remote, url } = a.target;
  let repositoryCreated = false;
  if (!(await repoExists(ctx, repo))) {
    await withRepoLock(ctx.store, repo.gitdir, 'sync.lock', async () => {
      if (await repoExists(ctx, repo)) return;
      await createRepo(ctx, repo, CORE_CONFIG);
      repositoryCreated = true;
    });
  }
  await ensureRemoteConfig(ctx.store, repo, remote, url);
  return { ...a, repositoryCreated };
}

/** What a fetch from a host with no branch reports: nothing changed, no repository made. */
function emptyResult(c: Connected): FetchResult {
  return { ...blankResult(c), empty: true };
}
