import { META_REF } from '@entity-git/core';
import { EntityGitError, loadIsoGit } from '@entity-git/git';
import type { Downloaded, Prepared } from './fetch-types.js';
import { HEAD_RECORD_REF, readHeadRecord } from './head-record.js';
import type { SessionTarget } from './target.js';
import { transportError } from './transport-error.js';
import { transportFs } from './transport-fs.js';

/**
 * The fourth phase: download what the host's branches and HEAD record need that this repository
 * lacks, then the host's meta ref where it is to be taken; check every tip arrived
 * (`REMOTE_ERROR`, retryable, when one did not).
 */
export async function download(p: Prepared): Promise<Downloaded> {
  const { repo } = p.target;
  const wanted = [...p.heads, ...(p.advertised.has(HEAD_RECORD_REF) ? [HEAD_RECORD_REF] : [])];
  const tips = new Map<string, string>(wanted.map((ref) => [ref, p.advertised.get(ref)!]));
  let downloaded = false;
  if (await anyMissing(p.target, [...tips.values()])) {
    await fetchBranches(p, wanted, tips);
    downloaded = true;
  }
  for (const [ref, oid] of tips) {
    if (!(await repo.objects.has(oid))) {
      const { sessionId, conn } = p.target;
      throw new EntityGitError(
        'REMOTE_ERROR',
        `fetch of session ${JSON.stringify(sessionId)} (${conn.safeUrl}): ${ref} ${oid} did not arrive`,
        { sessionId, url: conn.safeUrl, ref, oid, retryable: true },
      );
    }
  }
  const meta = await fetchMeta(p);
  const record = tips.get(HEAD_RECORD_REF);
  const remoteHead = record === undefined ? null : await readHeadRecord(repo.objects, record);
  return { ...p, tips, downloaded, meta, remoteHead };
}

async function anyMissing(t: SessionTarget, oids: string[]): Promise<boolean> {
  for (const oid of oids) if (!(await t.repo.objects.has(oid))) return true;
  return false;
}

/**
 * One isomorphic-git fetch of every branch (and the HEAD record), its HEAD assumed to be the
 * branch the record names (see `Connection.assumeHead`). isomorphic-git's own ref discovery
 * wins: `tips` is updated to what its pack holds.
 */
async function fetchBranches(p: Prepared, wanted: string[], tips: Map<string, string>): Promise<void> {
  const { repo, remote, conn } = p.target;
  const hasRecord = p.advertised.has(HEAD_RECORD_REF);
  const recorded = hasRecord ? await readHeadRecord(repo.objects, p.advertised.get(HEAD_RECORD_REF)!) : null;
  conn.assumeHead(
    recorded !== null && p.heads.includes(`refs/heads/${recorded}`) ? `refs/heads/${recorded}` : p.heads[0]!,
  );
  await isoFetch(p.target, hasRecord ? HEAD_RECORD_REF : p.heads[0]!, false);
  for (const ref of wanted) {
    const tracking = `refs/remotes/${remote.name}/${ref.startsWith('refs/heads/') ? ref.slice(11) : ref}`;
    const oid = await repo.refs.resolve(tracking).catch(() => null);
    if (oid !== null) tips.set(ref, oid);
  }
}

/**
 * The host's meta ref is taken where this repository has none (a restore), or with `force`;
 * else the local one stays: the next sync writes it from the session row either way.
 * isomorphic-git fetches one ref beside the branches, so it comes in a fetch of its own.
 */
async function fetchMeta(p: Prepared): Promise<Downloaded['meta']> {
  const { repo } = p.target;
  const theirs = p.advertised.get(META_REF);
  const ours = await repo.refs.resolve(META_REF).catch(() => undefined);
  let take = theirs !== undefined && ours !== theirs && (ours === null || p.options.force === true);
  if (take && !(await repo.objects.has(theirs!))) {
    await isoFetch(p.target, META_REF, true);
    take = await repo.objects.has(theirs!);
  }
  return { theirs, ours, take };
}

/** isomorphic-git's fetch of `ref` into the target, through the file system that only lets it write objects and remote-tracking refs. */
async function isoFetch(t: SessionTarget, ref: string, singleBranch: boolean): Promise<void> {
  try {
    const { fetch } = await loadIsoGit();
    await fetch({
      ...t.conn.args(),
      fs: transportFs(t.ctx.store, t.repo),
      gitdir: t.repo.gitdir,
      remote: t.remote.name,
      ref,
      remoteRef: ref,
      singleBranch,
      tags: false,
      prune: false,
    });
  } catch (err) {
    throw transportError(err, 'fetch', t.url, t.sessionId);
  }
}
