import { META_REF } from '@entity-git/core';
import { isAncestor } from '@entity-git/git';
import { adoptRepo, checkOutTree } from '@entity-git/core/repository';
import type { Connected, Downloaded, FetchResult } from './fetch-types.js';
import { ensureRemoteConfig } from './remote-config.js';
import { localBranches } from './target.js';

/**
 * The last phase, under the sync lock: the local branches moved to the host's tips as
 * {@link moveBranches} says, the meta ref taken when the download said so, HEAD placed
 * ({@link placeHead}), the config given what a sync records in a repository it makes (its layout
 * and format, `adoptRepo`) with the remote's section last, and, where the storage has a working
 * tree, HEAD's tree checked out by the sync's own checkout.
 */
export async function settle(d: Downloaded): Promise<FetchResult> {
  const { ctx, repo, remote, url } = d.target;
  const result: FetchResult = {
    ...blankResult(d),
    repositoryCreated: d.repositoryCreated,
    downloaded: d.downloaded,
    remoteHead: d.remoteHead,
  };
  const headBefore = await repo.refs.headBranch().catch(() => null);
  await moveBranches(d, headBefore, result);
  if (d.meta.take) {
    // Its first value writes no reflog, as a sync's does not (git logs no ref outside refs/heads,
    // refs/remotes and refs/notes): a change of it does.
    const reflog =
      d.meta.ours === null ? null : { who: d.identity, message: `fetch: session row from ${d.target.conn.safeUrl}` };
    await repo.refs.update(META_REF, d.meta.theirs!, { old: d.meta.ours, reflog });
  }
  await placeHead(d, headBefore, result);
  await adoptRepo(ctx, repo);
  await ensureRemoteConfig(ctx.store, repo, remote, url);
  if (ctx.store.workTree) result.worktreeChanged = await checkOutTree(ctx, repo);
  return result;
}

/**
 * Each of the host's branches: created when this repository lacks it, fast-forwarded when behind,
 * kept when ahead, kept when diverged unless `force` (the old tip stays in the reflog); each move
 * through `<ref>.lock` with the old value checked. Branches only this repository has are listed.
 */
async function moveBranches(d: Downloaded, headBefore: string | null, result: FetchResult): Promise<void> {
  const { repo, conn } = d.target;
  const local = await localBranches(repo);
  const reflog = (message: string, branch: string) => ({
    who: d.identity,
    message: `fetch: ${message} from ${conn.safeUrl}`,
    alsoHead: branch === headBefore,
  });
  for (const ref of d.heads) {
    const name = ref.slice('refs/heads/'.length);
    const theirs = d.tips.get(ref)!;
    const ours = local.get(name);
    if (ours === undefined) {
      await repo.refs.update(ref, theirs, { old: null, reflog: reflog('storing head', name) });
      result.created.push(name);
    } else if (ours === theirs) {
      result.upToDate.push(name);
    } else if (await isAncestor(repo.objects, ours, theirs)) {
      await repo.refs.update(ref, theirs, { old: ours, reflog: reflog('fast-forward', name) });
      result.fastForwarded.push(name);
    } else if (await isAncestor(repo.objects, theirs, ours)) {
      result.ahead.push(name);
    } else if (d.options.force) {
      await repo.refs.update(ref, theirs, { old: ours, reflog: reflog('forced-update', name) });
      result.forced.push(name);
    } else {
      result.diverged.push(name);
    }
  }
  const remoteNames = new Set(d.heads.map((r) => r.slice(11)));
  result.localOnly = [...local.keys()].filter((n) => !remoteNames.has(n));
}

/**
 * HEAD per `options.head`: the host's record with `remote`, or with `auto` when this repository
 * is a replica (nothing ahead, diverged or only local) or its HEAD is unborn; else where it was.
 * An unborn HEAD that the record cannot place names the first local branch.
 */
async function placeHead(d: Downloaded, headBefore: string | null, result: FetchResult): Promise<void> {
  const { repo } = d.target;
  const tipOf = (b: string) => repo.refs.resolve(`refs/heads/${b}`).catch(() => null);
  const mode = d.options.head ?? 'auto';
  const headTip = headBefore === null ? null : await tipOf(headBefore);
  const replica = result.ahead.length === 0 && result.diverged.length === 0 && result.localOnly.length === 0;
  const follow = mode === 'remote' || (mode === 'auto' && (replica || headTip === null));
  let target: string | null = null;
  if (follow && result.remoteHead !== null && (await tipOf(result.remoteHead)) !== null) target = result.remoteHead;
  else if (headTip === null) target = (await localBranches(repo)).keys().next().value ?? null;
  if (target !== null && target !== headBefore) {
    await repo.refs.setHead(
      target,
      d.identity,
      { branch: headBefore, oid: headTip },
      await repo.refs.resolve(`refs/heads/${target}`),
    );
    result.headMoved = true;
  }
  result.head = target ?? headBefore;
}

/** A fetch's result before any branch is looked at. */
export function blankResult(c: Connected): FetchResult {
  return {
    sessionId: c.target.sessionId,
    url: c.target.conn.safeUrl,
    empty: false,
    repositoryCreated: false,
    downloaded: false,
    created: [],
    fastForwarded: [],
    forced: [],
    upToDate: [],
    ahead: [],
    diverged: [],
    localOnly: [],
    head: null,
    remoteHead: null,
    headMoved: false,
    worktreeChanged: false,
  };
}
